import pytest
from ihbench.dataset import INTERRUPTION_TYPES, canonical_interruption_type, depth_bin


@pytest.mark.parametrize("spelling", ["topic switch", "Topic_Switch", "TOPIC-SWITCH", " topic  switch ", "topicswitch"])
def test_official_spellings_map_to_topic_switch(spelling):
    assert canonical_interruption_type(spelling) == "topic_switch"


@pytest.mark.parametrize("kind", INTERRUPTION_TYPES)
def test_canonical_names_are_fixed_points(kind):
    assert canonical_interruption_type(kind) == kind
    assert canonical_interruption_type(kind.upper().replace("_", " ")) == kind


def test_empty_means_no_interruption():
    assert canonical_interruption_type("") is None
    assert canonical_interruption_type(None) is None
    assert canonical_interruption_type("   ") is None


def test_unknown_type_is_an_error_naming_the_value():
    with pytest.raises(ValueError, match="'sarcasm'"):
        canonical_interruption_type("sarcasm")


def test_depth_bins_follow_the_paper():
    assert [depth_bin(d) for d in (0, 4, 5, 9, 10, 15, 19)] == ["0-4", "0-4", "5-9", "5-9", "10-14", "15-19", "15-19"]


SPELLINGS = ["normal", "Impatient", "CORRECTION", "corrections", "Topic Switch", "topic-switch", "topic_change",
             "topic shift", "topicswitch", "Filler", "backchannel", "Back Channel", "push back", "push-back",
             "Pushback", "sarcasm", "topic", "fillers", "normal interruption", " impatient "]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_the_dataset_layer_and_the_metric_modules_read_spellings_alike(spelling):
    """The metric modules stay self-contained (their own copy of the mapping); this proves the two
    copies accept and reject exactly the same spellings, and map them to the same type."""
    from metric_modules import shared

    bootstrap = shared("item_bootstrap")
    try:
        ours = canonical_interruption_type(spelling)
    except ValueError:
        ours = "rejected"
    try:
        theirs = bootstrap.canonical_type(spelling, 0)
    except ValueError:
        theirs = "rejected"
    assert ours == theirs, (spelling, ours, theirs)
