"""The floor-state machine on hand-made intervals (40 ms chunks, first chunk ends at 0.24 s)."""
from ihbench.dataset.floor import chunk_end_times, floor_labels


def test_chunk_end_times():
    assert chunk_end_times(0.2) == [] and chunk_end_times(0.28) == [0.24]
    assert chunk_end_times(1.0)[:3] == [0.24, 0.28, 0.32] and chunk_end_times(1.0)[-1] == 0.96


def test_a_clean_handover_is_one_take_then_holds():
    labels = floor_labels([(0.0, 1.0)], [(1.2, 2.0)], 2.2)
    by_time = dict(zip(labels.end_times, zip(labels.events, labels.turns)))
    assert by_time[0.24] == ("T", "NA")  # A starts: it takes the floor
    assert by_time[0.28] == ("C", "A")
    assert by_time[1.0] == ("NA", "A")  # the gap: A still holds the floor
    assert by_time[1.16] == ("NA", "A") and by_time[1.2] == ("T", "A")  # (1.2, 1.24]: B has started
    assert labels.events.count("T") == 2


def test_a_barge_in_is_a_run_of_i_then_t_and_a_failed_one_i_then_c():
    won = floor_labels([(0.0, 1.0)], [(0.6, 2.0)], 2.2)
    overlap = [e for e, t in zip(won.events, won.end_times) if 0.6 <= t + 0.04 and t < 1.0]
    assert set(overlap) == {"I"}
    after = won.events[won.end_times.index(1.0)]
    assert after == "T" and won.turns[won.end_times.index(1.0)] == "AB"
    failed = floor_labels([(0.0, 2.0)], [(0.6, 0.9)], 2.2)
    assert failed.events[failed.end_times.index(0.92)] == "C"
    assert failed.turns[failed.end_times.index(0.92)] == "AB"


def test_a_listener_backchannel_is_bc_and_the_floor_stays():
    labels = floor_labels([(0.0, 2.0)], [], 2.2, b_backchannels=[(0.8, 1.1)])
    window = [e for e, t in zip(labels.events, labels.end_times) if 0.76 < t < 1.1]
    assert set(window) == {"BC"}
    assert "T" not in labels.events[1:] and set(labels.turns[1:]) == {"A"}
