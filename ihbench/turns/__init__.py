"""Turn-taking from two-channel recordings (the Talking Turns protocol): voice activity per
channel, inter-pausal units, backchannels, and the floor-state machine that turns both channels
into the 40 ms `events` and `turns` the `turn_taking_agreement` metric module takes."""
