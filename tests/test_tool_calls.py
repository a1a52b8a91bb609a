"""The tool-call parsers of the local families, on text as the models write it (special tokens kept)."""
from __future__ import annotations

import pytest
from ihbench.loaders.tool_calls import gemma4, gemma4_arguments, hermes, mistral

BOOK = {"customer": "Ada Park", "slot_id": "42"}
Q = '<|"|>'


def calls(parsed):
    return [(call.id, call.name, call.arguments) for call in parsed[1]]


# -- Qwen3 / Qwen3-Omni (Hermes) ---------------------------------------------------------------

def test_hermes_reads_several_calls_and_keeps_the_text_around_them():
    text = ('Let me book that.\n<tool_call>\n{"name": "book_repair", "arguments": {"customer": "Ada Park", '
            '"slot_id": "42"}}\n</tool_call>\n<tool_call>\n{"name": "end_session", "arguments": {}}\n</tool_call>\n'
            'Anything else?<|im_end|>')

    said, found = hermes(text, "call_3")

    assert said == "Let me book that.\nAnything else?<|im_end|>"
    assert [(c.id, c.name, c.arguments) for c in found] == [("call_3_0", "book_repair", BOOK),
                                                           ("call_3_1", "end_session", {})]
    assert found[0].raw_arguments == '{"customer": "Ada Park", "slot_id": "42"}'


def test_hermes_keeps_broken_arguments_as_written_and_the_call_as_made():
    said, found = hermes('<tool_call>\n{"name": "book_repair", "arguments": {"slot_id": 42,}}\n</tool_call>')

    assert said == "" and found[0].name == "book_repair"
    assert found[0].arguments == found[0].raw_arguments == '{"slot_id": 42,}'


def test_hermes_reads_a_call_cut_by_the_length_limit():
    said, found = hermes('One moment. <tool_call>\n{"name": "book_repair", "arguments": {"slot_id": "4')

    assert said == "One moment." and found[0].name == "book_repair"
    assert found[0].arguments == '{"slot_id": "4'


def test_a_hermes_block_that_names_no_function_stays_in_the_text():
    text = '<tool_call>{"oops": 1}</tool_call> Sorry.'

    assert hermes(text) == ('<tool_call>{"oops": 1}</tool_call>\nSorry.', [])


def test_text_without_calls_is_returned_as_it_is():
    assert hermes("We open at 9.") == ("We open at 9.", [])
    assert mistral("We open at 9.") == ("We open at 9.", [])
    assert gemma4("We open at 9.") == ("We open at 9.", [])


# -- Voxtral (mistral-common v7) -------------------------------------------------------------

def test_mistral_reads_the_call_list_after_the_marker_and_the_text_before_it():
    text = ('Booking it now.[TOOL_CALLS][{"name": "book_repair", "arguments": {"customer": "Ada Park", '
            '"slot_id": "42"}, "id": "a1b2c3d4e"}, {"name": "end_session", "arguments": "{}"}]</s>')

    said, found = mistral(text, "call_0")

    assert said == "Booking it now.\n</s>"
    assert [(c.id, c.name, c.arguments) for c in found] == [("call_0_0", "book_repair", BOOK),
                                                           ("call_0_1", "end_session", {})]


def test_mistral_keeps_broken_arguments_per_call():
    text = '[TOOL_CALLS][{"name": "cancel_booking", "arguments": {"slot_id": "42"}}, {"name": "book_repair", "arguments": {"slot_id": 43,}}]'

    said, found = mistral(text)

    assert said == ""
    assert [(c.name, c.arguments) for c in found] == [("cancel_booking", {"slot_id": "42"}),
                                                      ("book_repair", '{"slot_id": 43,}')]


def test_a_mistral_marker_without_a_call_stays_in_the_text():
    assert mistral("Sure.[TOOL_CALLS] nothing") == ("Sure.\n[TOOL_CALLS] nothing", [])


# -- Gemma 4 ---------------------------------------------------------------------------------

def test_gemma4_reads_its_own_argument_syntax():
    text = (f"Okay.<|tool_call>call:book_repair{{customer:{Q}Ada Park{Q},slot_id:{Q}42{Q}}}<tool_call|>"
            f"<|tool_call>call:end_session{{}}<tool_call|><|tool_response>")

    said, found = gemma4(text, "call_1")

    assert said == "Okay.\n<|tool_response>"  # the end token, removed with the other special tokens
    assert [(c.id, c.name, c.arguments) for c in found] == [("call_1_0", "book_repair", BOOK),
                                                           ("call_1_1", "end_session", {})]
    assert found[0].raw_arguments == '{"customer": "Ada Park", "slot_id": "42"}'


def test_gemma4_arguments_keep_quotes_commas_and_colons_inside_strings():
    inner = f'note:{Q}Say "hi", then: {{wait}}{Q},count:3,ok:true,tags:[{Q}a{Q},{Q}b{Q}],where:{{city:{Q}Oslo{Q}}}'

    assert gemma4_arguments(inner) == {"note": 'Say "hi", then: {wait}', "count": 3, "ok": True,
                                       "tags": ["a", "b"], "where": {"city": "Oslo"}}


@pytest.mark.parametrize("inner", ["customer:Ada", f"customer:{Q}Ada", "customer:"])
def test_gemma4_keeps_arguments_it_cannot_read_as_written(inner):
    said, found = gemma4(f"<|tool_call>call:book_repair{{{inner}}}<tool_call|>")

    assert said == "" and found[0].name == "book_repair" and found[0].arguments == inner


def test_gemma4_reads_a_call_cut_by_the_length_limit():
    """Cut after a whole value it still reads; cut inside one, its arguments are kept as written."""
    whole = gemma4(f"<|tool_call>call:book_repair{{customer:{Q}Ada Park{Q}")[1]
    cut = gemma4(f"<|tool_call>call:book_repair{{customer:{Q}Ada Pa")[1]

    assert whole[0].arguments == {"customer": "Ada Park"}
    assert cut[0].name == "book_repair" and cut[0].arguments == f"customer:{Q}Ada Pa"
