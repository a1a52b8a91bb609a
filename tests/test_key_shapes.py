"""What is taken for an API key where a name goes, and what is not (battery 49, V1-V3).

Keys pasted as a model's name or path, or in an option's value, must never be written in clear; names,
paths and hashes must not be refused or redacted. The keys below were drawn at random in the shapes
providers issue (a typed "random" key has patterns no real key has); the names are real model ids, class
names, run folders and file names.
"""
import random
import re
import string
import uuid

import pytest

from ihbench.dataset.key_shapes import holds_a_random_run
from ihbench.dataset.redaction import REDACTED, address_without_credentials, credential_in, redact

KEYS = [
    # battery 58, E10: a Hugging Face token of letters only that spelled word pairs by chance, SendGrid's shape, and
    # token_urlsafe keys whose short groups spell a word (`_am-`, `_xil_`)
    ("Hugging Face", "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"), ("Hugging Face", "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"),
    ("SendGrid", "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"),
    ("url-safe base64", "13PYr1Rlmug-mTRXrJB5mwkvE-xil_hMR_M0_WujyoA"),
    ("url-safe base64", "Ygwz8lgY6k5Mwtubp_am-sN9FszfhZsxboM2cAWUpuo"),
    ("url-safe base64", "m1L7jSNT1Ihf4Tf6X5aL_req_LX07reHxL1aDgN2x60"),
    ("Mistral", "biOGrHRBUs3TxN3aFJ8hbUlA6P46VVLN"), ("Mistral", "Avg4gvgaw5MY02gAJA5qC6qYJ7OqCCmA"),
    ("Cohere", "ugKEHY44MzrsYv3RAzh9w3dN6oj2j2iyYg4wrLfq"), ("Cohere", "s4Nkl0ylMAjLivlKFrzSVV8LYFuKATFEgYt9HXDc"),
    ("Azure", "eed6e4cbd825a5ec40be6d0a5a8b2898"), ("Azure", "6b13214aab63c4c1b3d531ea305b5a18"),
    ("Azure", "42115537b169966b5f24644b0b996d8e"), ("Azure, upper case", "42115537B169966B5F24644B0B996D8E"),
    ("AssemblyAI", "f4472242fcd26a43062663cb48ffdecb"), ("AssemblyAI", "499d03ae23312835c4d6e282eb7fabbe"),
    ("upper case and digits", "1CMBQKJ8NBLH7C63CC3H9RC7YU6MS2UC"),
    ("upper case and digits", "FU1LO77AZKXKV90SNA8J52PZ4AKTQMFK"),
    ("upper case and digits", "O1254QO6QAIZVSUVZIC6EF0JNLWQ18DD"),
    ("lower case and digits", "q0yze1cjsqllac3pzjbnnzhek5kv5ieg"),
    ("lower case and digits", "eifapn3hlkm225pzbiknnd6w9kg5sljw"),
    ("dash groups", "lp1TeP0l-srQws8lI-X2LdqJcu-wgCP5M8L"), ("dash groups", "ug05eFf6-jGJcKnvQ-9hENhzaY-ebLt1loj"),
    ("dash groups", "Up00QxxN-TDIXpNdm-LJQu9TQB-uNIuP8g1"),
    ("token_urlsafe", "9qhlF12_gY_87PImMZl5LCcfeV3xqe3XI1DphwdojN4"),
    ("token_urlsafe", "WPBXSU2IhmIqCO_8HgD48gq655cP0hkt3UhbZi9IDAA"),
    ("token_urlsafe", "9GgTF7t9QbIb1dMKXxBjy72xyb5FLCuEc0t_1jFYGKk"),
    ("token_urlsafe, a dash early", "S-DkjjbvHjYfyykepvlyXscJ17SsyvZII23QFP7IIhk"),
    ("Speechmatics", "SreGuRKixfXTJvwi4hIkLqpG731r14OT"), ("Speechmatics", "XmICJpFZPxmWp2NgOKEZdOaVDO3fU38U"),
    ("48 random", "DXdpnkQ8O6BWXLKhhB479LUujpIjY3d5dbbDbhXDf9zgqvnC"),
    ("48 random", "geQwbpdTvEpiqSK9rWvrTwBGtDwXTYlGCJR6S2FRKhwVMkBx"),
    ("24 random", "GerEZKLYQSVshbQZU7me77MW"), ("24 random", "TCgtbeTUlwQHWELmQo0eVlMM"),
    ("OpenAI project", "sk-proj-rVLsatrPMA37gZkzjwKuxj911irIDMNpkV8F-g4PtTOrX9AIslJzXTNEmONE5LK_"),
    ("OpenAI project", "sk-proj-RadNim9d9PQTsKE2iKh8NwqQbimwxofPt_cxdIppfb8LaQyjx6_flcY5NYb9KI0F"),
    ("Anthropic", "sk-ant-api03-uOZ15JDJPPMw6_Hr9688KG22TaUEOtpDzayJuRx089FNVVJtWjWWiEge7RgGRYl1ua3zzrTi0IL4aD3Kpl"),
    ("Anthropic", "sk-ant-api03-YY-UwTEyKhkCHwjR9ZJ65YZabeiOrnhxHIMiZPqdQousgBA021mM-b3oPBFIfX-MjmO-eNLASUH2Of"),
    ("Google", "AIzasNm52enph0LDVE0KqAhGfeXHRjodYlQJbQk"), ("Google", "AIza7Jdlpp1jBUpAf8Lf0E6jcDF63dWvSsBjNO8"),
    ("ElevenLabs", "sk_0633fd95ec640d3a8a181321fa0ec03ac4b5a7691e227af0"),
    ("ElevenLabs", "sk_6e772cf2f240b94ec4cd6e563a02301530c3af0fd4d325c5"),
    ("Hugging Face", "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"), ("Hugging Face", "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"),
    ("Slack", "xoxb-291171134216-8215217339997-eIH9ZYN48OK4W2aoiBIj8AwC"),
    ("Slack", "xoxb-579410153395-8111562199664-UrtkgqZfQLv9GvA0X2kIvKIs"),
    ("Groq", "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"),
    ("xAI", "xai-Jo9k1dSuKjPMgk3oReyyG7LFxhSzobh87JzLMGd6CKZmD93UwIiL54JajNCGcUgipC5ilF7yQyjqysxB"),
    # battery 50: W1 base64 (an AWS secret key, an Azure storage key), W2 Zhipu's, W3 hex of other lengths, W4
    # one-case dash groups
    ("AWS secret key, base64", "xTvGgkajvCo+m/ZTD767lV1FREUTS9cd/lOAIR9P"),
    ("AWS secret key, base64", "V6vgG2qqR7THxVl8lxHKXym+iKb0iW+MKE1pPUjb"),
    ("Azure storage key", "QjpxGYBiNpVoz4RBfd1ZO+IkhXX6Mvb3MnhDKX9I+UgrSoDnbdrMepjJBFW87nKR/yt5RFmnXlZvGVQ+EhT78g=="),
    ("Zhipu id.secret", "2560527bac1dc8e22acb4500df63e68b.yuzULyct9SMYMqkw"),
    ("token_hex(24)", "5905b05258756f676fcf59c2cce81cb07369732ee3da43ae"),
    ("token_hex(64)", "648ed58c27780fdecc9ff4316fbbd81dd35ddfffa007795af50a4b1b4edd43fe0195a614f6473427833ffb14bb841d675dc"
                      "011e0092c9fa2106cd556bde91072"),
    ("upper case in dash groups", "O7MD-JKSP-EPQH-0HN1-TCYM-7F73-RI3T-79E2"),
    ("lower case in dash groups", "1m1l1nee-uo1p2qo2-nbofe2i2-fnh4wrx4"),
    # battery 51: X1 a key with a file's extension, X2 Zhipu's with few digits in its secret part
    ("product key with an extension", "K1BS-URUR-K42T-H5HQ-KZE9-7HBQ-O4XB-YMB7.sqlite"),
    ("token_urlsafe with an extension", "j_5yqgFNoiA1RaIHf6d_GfZmyj-cxr6ZxETuYaG1joA.json"),
    ("32 hex with an extension", "605efc8216d3a30d2ec1a7965156cff6.json"),
    ("Zhipu, one digit in its secret", "2aa2f8aed7ff726b4261eccd39761c9f.VKbnQSgEWWhIOPx4"),
    ("DeepSeek", "sk-a1b2c3d4e5f60718293a4b5c6d7e8f90"), ("Cerebras", "csk-k3j9x2m8q7w1e5r4t6y0u2i9o8p7a6s5d4f3g2h1j0k9"),
]

NAMES = """
Qwen2AudioForConditionalGeneration Qwen2Audio7BInstruct4bitQ4KM SeamlessM4Tv2ForSpeechToText myRun3Ep2Lr1e4Bs8Sd42Wd1e2
run2024Dec07seed42epoch3lr3e5 gpt4oAudioPreview20241217 gpt4oaudiopreview20241217 hf_checkpoint1500steps
qwen2audio7binstruct20240801 Phi4MultimodalInstructQ4KM KimiAudio7BInstructFP16 WhisperLargeV3TurboCT2Int8 MiniCPMo26Int4GGUF
gpt4oMiniRealtimePreview20241217 Mistral7BInstructV0p3AWQ Qwen25Omni7BGPTQInt4 GLM4Voice9BChatInt8 SpeechT5ForTextToSpeech
Wav2Vec2ConformerForCTC Data2VecAudioForSequenceClassification UniSpeechSatForXVector XLMRobertaLargeFinetunedConll03English
Meta-Llama-3.1-8B-Instruct ihbench-qwen2audio-7b-instruct-epoch3-lr3e-5-bs8 run_2024_12_07_seed42_qwen2_audio_7b
ihbench_run_20241207T120301Z Phi-4-multimodal-instruct-onnx-int4-rtn-block-32 Kimi-Audio-7B-Instruct-GPTQ-Int4-g128
whisper-large-v3-turbo-ct2-int8-float16 Qwen2AudioInstruct7BFinetunedV2 llama3p1Nemotron70BInstructHF DeepSeekR1DistillQwen32BAWQ
Qwen2_5_Omni_7B_GPTQ_Int4_2025_03_26 checkpoint-1500-epoch-3-step-4500-loss-0p231 myModelV2Run17Seed1234Fold3Final
ConversationBenchTurn12Epoch3Seed42 speechLlamaV2Ckpt1500BestWer0p07 hubertLargeLl60kFinetuneLs960 wav2vec2LargeXlsr53English
mms1bAll1162LanguagesAdapter canaryQwen25bInstruct2025 parakeetTdt06bV2Nemo2025 distilWhisperLargeV3En4bit
GraniteSpeech33_8bInstruct2025 gemma3nE4BItLitertPreview2025 VoxtralMini3B2507Instruct ultravoxV0_5Llama3_1_8bAdapter20250103
ExperimentRun20241207T120301ZSeed42 evalQwen2AudioOnIHBenchDev20241207 run-7b-lr1e-5-warmup500-bs16-ga4-seed42-ep3
SFTQwen2Audio7BOnSyntheticInterruptions50kV3 kimiaudio7binstructawq4bitgs128 tinyrandomqwen2audioforconditionalgeneration
Phi4MMInstructLoRAr16Alpha32Dropout0p05 MiniCPMo2_6Int4BnbNf4DoubleQuant Step1oAudio130BChatInt4AWQ SALMONN13Bv1VicunaWhisperBEATs
FunAudioLLMSenseVoiceSmall2024 CosyVoice2_0_5B_25Hz_Instruct FireRedASR_AED_L_1_1B Baichuan_Omni_1_5_7B_Instruct_BF16
QWEN2AUDIO7BINSTRUCTQ4KM IHBENCH_RUN_2024_12_07_SEED42 MY_EXPERIMENT_V2_LR3E5_BS16_EP3
gpt-4o-realtime-preview-2024-12-17 us.anthropic.claude-3-5-haiku-20241022-v1 ihbenchQwen2AudioRun3Seed42Temp0p7TopP0p9
ckpt_step_000150000_ema_0p9999_bf16 epoch=3-step=4500-val_loss=0.2310.ckpt model-00001-of-00004.safetensors
Phi4MMInstruct20250226Int4AwqGs128Desc MLP_Speech_Adapter_Qwen2_Audio_Encoder_Layer_32_Projection
facebook/wav2vec2-xlsr-53-espeak-cv-ft jonatasgrosman/wav2vec2-large-xlsr-53-english microsoft/Phi-4-multimodal-instruct
fixie-ai/ultravox-v0_5-llama-3_1-8b google/gemma-3n-E4B-it-litert-preview openbmb/MiniCPM-o-2_6-int4
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
hf-internal-testing/tiny-random-Qwen2AudioForConditionalGeneration lmstudio-community/DeepSeek-R1-Distill-Qwen-7B-GGUF
RedHatAI/Qwen2.5-VL-7B-Instruct-quantized.w4a16 hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4
LoneStriker/Mixtral-8x7B-Instruct-v0.1-6.0bpw-h6-exl2 ylacombe/wav2vec2-bert-CV16-en-libri-clean-MMS
TheBloke/CodeLlama-34B-Instruct-GPTQ_gptq-4bit-32g-actorder_True KimiAudioWhisperEncoderGLM4Tokenizer12_5Hz
/home/me/runs/2024-12-07_12-03-01_qwen2audio_seed42 wandb/run-20241207_120301-3kx9z2ab/files
hub/models--Qwen--Qwen2-Audio-7B-Instruct/snapshots/0a095220c30b7b31434169c3086508ef3ea5bf0a
sha256-9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
runs/550e8400-e29b-41d4-a716-446655440000
runs/MyExperiment/Seed42/Checkpoint1500 /home/Me/Projects/IHBench/runs/Qwen2Audio7B/Run20241207/Epoch3
models/Qwen2AudioForConditionalGeneration/SafeTensors/Shard00001Of00004
unsloth/Qwen3-8B-unsloth-bnb-4bit unsloth/Qwen2.5-Omni-7B-unsloth-bnb-4bit RedHatAI/Qwen3-30B-A3B-FP8-dynamic
FunAudioLLM/SenseVoiceSmall AudioLLMs/SenseVoiceSmall Qwen2.5-Omni-7B.gguf 605efc8216d3a30d2ec1a7965156cff6_eval
""".split()


@pytest.mark.parametrize("label, key", KEYS, ids=[f"{label}-{i}" for i, (label, _) in enumerate(KEYS)])
def test_a_key_of_a_provider_s_shape_is_found_wherever_it_goes(label, key):
    assert credential_in(key) == "what looks like an API key"
    assert credential_in(f"runs/{key}/out") == "what looks like an API key"
    written = str(redact({"extra_body": {"user": key, key: 1}, "command": ["--model-path", key, "--option",
                                                                           f'extra_body={{"u": "{key}"}}']}))
    assert not _pieces_of(key, written), written  # no part of it (battery 49, V2: a token_urlsafe's head stayed)
    address = redact(f"http://host:8000/v1/{key}/chat")
    assert address == f"http://host:8000/v1/{REDACTED}/chat" and address_without_credentials(address) == \
        "http://host:8000/v1/(hidden)/chat"


def _pieces_of(key: str, text: str) -> list:
    """The parts of `key` between its separators, 6 characters or more, that `text` still holds."""
    return [part for part in re.split(r"[-_.+/=]", key) if len(part) >= 6 and part in text]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_path_or_hash_is_no_key(name):
    """Battery 49, V1 and V3: CamelCase names with digits were refused as keys, and in a server's address
    redacted, so a resume against another deployment passed the endpoint check."""
    assert credential_in(name) is None
    assert redact(name) == name
    address = f"https://x.openai.azure.com/openai/deployments/{name}/v1"
    assert redact(address) == address and address_without_credentials(address) == address


SHAPES = {
    "62 characters, 32 long": (string.ascii_letters + string.digits, 32),
    "62 characters, 24 long": (string.ascii_letters + string.digits, 24),
    "62 characters, 64 long": (string.ascii_letters + string.digits, 64),
    "upper case and digits": (string.ascii_uppercase + string.digits, 32),
    "lower case and digits": (string.ascii_lowercase + string.digits, 32),
    "url-safe base64": (string.ascii_letters + string.digits + "-_", 43),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_almost_every_random_key_is_found(shape):
    """The rule is a test of randomness: about one key in a thousand shows structure by chance. A seeded
    draw of 2000 keys of each shape: at most 1% missed."""
    alphabet, length = SHAPES[shape]
    draw = random.Random(shape)
    keys = ["".join(draw.choice(alphabet) for _ in range(length)) for _ in range(2000)]
    missed = [key for key in keys if not holds_a_random_run(key)]
    assert len(missed) <= 20, missed[:5]


def test_every_hugging_face_token_is_found_by_its_shape():
    """Battery 58, E10: `hf_` and 34 letters of both cases is a Hub token's whole shape; about one in 2,000 spelled
    enough common letter pairs to be taken for a name, and was written into run.json."""
    draw = random.Random("hf")
    tokens = ["hf_" + "".join(draw.choice(string.ascii_letters) for _ in range(34)) for _ in range(4000)]
    assert [token for token in tokens if credential_in(token) is None] == []


def test_hashes_and_identifiers_of_other_lengths_are_no_keys():
    """A revision (40 hex) or a file's sha256 (64) is no key; 32 hex is Azure's key shape. A UUID's groups
    are judged apart."""
    draw = random.Random(3)
    for length in (16, 40, 64):
        hexes = ["".join(draw.choice("0123456789abcdef") for _ in range(length)) for _ in range(200)]
        assert not any(map(holds_a_random_run, hexes))
    assert not any(holds_a_random_run(str(uuid.UUID(int=draw.getrandbits(128)))) for _ in range(200))


def test_a_secret_variable_s_value_is_hidden_in_every_option_whatever_its_shape(monkeypatch):
    """Battery 50, W7: the value of $MY_API_KEY in extra_body was written when its shape was not a key's
    (only names, paths and URLs were checked against the environment)."""
    monkeypatch.setenv("MY_API_KEY", "proxy-key-of-any-shape")
    written = redact({"extra_body": {"user": "proxy-key-of-any-shape"},
                      "command": ["--option", 'extra_body={"user": "proxy-key-of-any-shape"}']})
    assert "proxy-key" not in str(written) and written["extra_body"]["user"] == REDACTED


def test_an_id_made_of_a_word_and_a_hash_is_no_key():
    """The judge batch's request ids (`ihb-<32 hex>`) were redacted in the refusal that names one."""
    for name in ("ihb-605efc8216d3a30d2ec1a7965156cff6", "run_605efc8216d3a30d2ec1a7965156cff6"):
        assert credential_in(name) is None and redact(name) == name


def test_a_run_of_thousands_of_characters_in_a_server_s_message_is_judged_without_overflow():
    """A blob in an error message (a run of 3000 random letters and digits) ended in an OverflowError
    from the exact binomial's integers."""
    from ihbench.dataset.redaction import redact_text

    draw = random.Random(5)
    blob = "".join(draw.choice(string.ascii_letters + string.digits) for _ in range(20000))
    assert redact_text(f"HTTP 500: {blob}") == f"HTTP 500: {REDACTED}"
    assert redact_text("HTTP 500: " + "Audio" * 4000) == "HTTP 500: " + "Audio" * 4000


def test_model_ids_made_of_a_family_a_size_and_a_variant_are_names():
    """Battery 50, W11: 11% of such ids (`Qwen3-8B-unsloth-bnb-4bit`, `...-FP8-Dynamic`) were refused as keys,
    and redacted as a deployment's name in a server's address."""
    import itertools

    families = ["Qwen3", "Qwen2.5-Omni", "Qwen2-Audio", "Llama-3.1", "gemma-3n", "Phi-4-multimodal", "Voxtral-Mini",
                "Kimi-Audio", "granite-speech-3.3", "GLM-4-Voice", "Mistral-Small-3.2"]
    sizes = ["0.5B", "1B", "3B", "7B", "8B", "14B", "24B", "30B-A3B", "E4B", "70B"]
    variants = ["Instruct", "it", "unsloth-bnb-4bit", "Instruct-unsloth-bnb-4bit", "AWQ", "GPTQ-Int4", "GGUF", "FP8-Dynamic",
                "MLX-4bit", "Q4_K_M", "Base", "Chat", "lora-r16", "Instruct-2507", "it-qat-q4_0-gguf"]
    names = [f"org/{f}-{s}-{v}" for f, s, v in itertools.product(families, sizes, variants)]
    refused = [name for name in names if credential_in(name)]
    assert len(refused) <= len(names) // 200, refused[:10]


@pytest.mark.parametrize("variable", ["OPENAI_API_KEY_2", "SPEECH_KEY1", "AZURE_KEY_PROD"])
def test_a_variable_with_a_secret_word_anywhere_in_its_name_holds_a_secret(variable, monkeypatch):
    """Battery 50, W7: `--out r_$OPENAI_API_KEY_2` named a folder with the key (only names ending in KEY,
    TOKEN, ... were taken for secrets); a path in such a variable (`HF_TOKEN_PATH`) stays a path."""
    monkeypatch.setenv(variable, "proxy-key-of-any-shape")
    monkeypatch.setenv("HF_TOKEN_PATH", "/root/.cache/huggingface/token")
    assert credential_in("r_proxy-key-of-any-shape") == f"the value of ${variable}"
    assert credential_in("/root/.cache/huggingface/token") is None
    assert redact({"extra_body": {"user": "proxy-key-of-any-shape"}})["extra_body"]["user"] == REDACTED


def test_almost_every_zhipu_key_is_found_whole():
    """Battery 51, X2: `<32 hex>.<16 letters and digits>` was taken for a hash and a word in 6% of draws (the
    two halves' kinds of character differ, which read as a name's structure)."""
    draw = random.Random(11)
    keys = ["".join(draw.choice("0123456789abcdef") for _ in range(32)) + "." +
            "".join(draw.choice(string.ascii_letters + string.digits) for _ in range(16)) for _ in range(1000)]
    missed = [key for key in keys if credential_in(key) is None]
    assert len(missed) <= 10, missed[:5]


@pytest.mark.parametrize("label", ["{key}-v2", "{key}_eval", "run_{key}", "{key}.sqlite", "{key}.env",
                                   "{key}-final2", "{key}-backup-v2", "{key}-v2-final", "run_eval_{key}", "my_run_{key}",
                                   "{key}-20241217", "{key}-copy-1", "{key}-epoch3", "{key}-FINAL", "{key}-PROD1",
                                   "_run42_{key}", "x{key}"])
def test_a_key_with_labels_or_an_extension_beside_it_is_still_a_key(label):
    """Battery 51, X1: `--out <key>-v2`, `--cache <key>.sqlite` named a folder or a file with the key: the label
    was read as the word that makes a group a model's name. Battery 52, Y1: so did two labels
    (`<key>-backup-v2`), a longer one (`-final2`, `-PROD1`), a date, or a letter glued to the first group."""
    draw = random.Random(label)

    def groups(alphabet: str, length: int, count: int) -> str:
        return "-".join("".join(draw.choice(alphabet) for _ in range(length)) for _ in range(count))

    keys = []
    for _ in range(150):
        urlsafe = "".join(draw.choice(string.ascii_letters + string.digits + "-_") for _ in range(43))
        upper, lower = string.ascii_uppercase + string.digits, string.ascii_lowercase + string.digits
        keys += [label.format(key=key) for key in (groups(upper, 4, 8), groups(upper, 5, 5), groups(lower, 8, 4),
                                                   urlsafe)]
    missed = [key for key in keys if credential_in(key) is None]
    assert len(missed) <= len(keys) // 50, missed[:5]


@pytest.mark.parametrize("label", ["key-{hex}", "api_key_{hex}", "API_KEY_{hex}", "apikey-{hex}", "secret-{hex}",
                                   "token_{hex}", "Bearer_{hex}", "mykey.{hex}", "OPENAI_API_KEY-{hex}", "{hex}_secret",
                                   "access_token_{hex}", "azure_openai_api_key_{hex}", "AZURE_OPENAI_KEY_{hex}",
                                   "Ocp-Apim-Subscription-Key-{hex}", "speech_key_{hex}", "github_token_{hex}",
                                   "db_password_{hex}", "aws_secret_access_key_{hex}", "Authorization-Bearer-{hex}",
                                   "secret-{hex}-v2", "secret_{hex}_old", "api_key_{hex}-v2", "key-{hex}-prod", "pwd_{hex}",
                                   "HF_TOKEN_{hex}", "auth-{hex}", "keys_{hex}", "AzureOpenAIKey_{hex}", "APIKEY{hex}",
                                   "clientsecret-{hex}", "azure.openai.api.key.{hex}", "api_key2_{hex}",
                                   "api_key_{hex}_backup", "AzureOpenAIApiKey{hex}", "subscription_key_{hex}.wav",
                                   # battery 55, B2 and B3: any word ending in a secret word; an id's word before
                                   # `key` only
                                   "openaikey_{hex}", "primarykey_{hex}", "hftoken_{hex}", "dbpassword_{hex}",
                                   "apikeys_{hex}", "clientsecrets_{hex}", "openaiApiKey{hex}", "creds_{hex}",
                                   "group_secret_{hex}", "cache_token_{hex}", "index_apikey_{hex}", "password{hex}"])
def test_hex_beside_a_label_that_says_secret_is_a_key(label):
    """Battery 52, Y2: hex joined to a label is an id's hash (`ihb-<hex>`), and so `api_key_<hex>` pasted from a
    .env file was written as a name. Battery 54, A1: so were Azure's keys (32 hex) beside more words than the
    secret words (`azure_openai_api_key_`, `secret-<hex>-v2`): a secret word anywhere among a label's words counts."""
    draw = random.Random(label)
    for _ in range(20):
        written = label.format(hex="".join(draw.choice("0123456789abcdef") for _ in range(32)))
        assert credential_in(written) == "what looks like an API key", written


def test_ids_of_public_records_are_names():
    """Battery 52, Y6: a Twilio recording's file (`RE<32 hex>.wav`, the very input `ihbench turns` is for) was
    refused as a key; so were ULIDs. A key beside one is still found."""
    import time

    draw = random.Random(52)
    base32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

    def ulid() -> str:
        milliseconds = int(time.time() * 1000) - draw.randrange(10 ** 11)
        stamp = "".join(base32[(milliseconds >> (5 * i)) & 31] for i in range(9, -1, -1))
        return stamp + "".join(draw.choice(base32) for _ in range(16))

    for _ in range(50):
        sid = draw.choice(["RE", "CA", "AC"]) + "".join(draw.choice("0123456789abcdef") for _ in range(32))
        for name in (sid, f"recordings/{sid}.wav", f"call_2024_{sid}.wav", ulid(), ulid().lower() + ".wav"):
            assert credential_in(name) is None and redact(name) == name, name
        key = "".join(draw.choice(string.ascii_letters + string.digits) for _ in range(32))
        assert credential_in(f"{sid}_{key}") == "what looks like an API key"


@pytest.mark.parametrize("label", ["monkey_{hex}", "hockey-{hex}.wav", "cache_key_{hex}", "speaker_key_{hex}",
                                   "tokens_{hex}.npy", "{hex}_tokens.pt", "pat-{hex}", "hash_key-{hex}.json",
                                   "turkey_{hex}", "keyframes_{hex}.npy", "cachekey_{hex}"])
def test_hex_beside_a_word_that_only_ends_in_a_secret_word_is_an_id(label):
    """Battery 53, Z5: any word ending in key or token (`monkey`, `cache_key`, `tokens`) made the hash beside it a key."""
    draw = random.Random(label)
    for _ in range(20):
        name = label.format(hex="".join(draw.choice("0123456789abcdef") for _ in range(32)))
        assert credential_in(name) is None, name


@pytest.mark.parametrize("label", ["first_pass_", "two_pass_decoding_", "pass_at_1_", "token_level_f1_", "token-count-",
                                   "token_ids_", "key-frames-", "key_detection_", "music_key_", "query_key_value_",
                                   "kv_key_", "ssh_key_fingerprint_", "api_key_id_", "oauth_client_id_", "auth-service-",
                                   "bearer_capability_", "secrets-manager-arn-", "secret-santa-"])
def test_a_secret_word_inside_a_label_that_names_something_else_leaves_the_hash_an_id(label):
    """Battery 55, B9: with a secret word anywhere among a label's words, eval and ML names (`pass_at_1_`, `token_ids_`,
    `key_frames_`) beside an md5 were refused as keys. A word after the secret word that makes it a thing's
    (`ids`, `frames`, `level`) decides."""
    draw = random.Random(label)
    for _ in range(20):
        name = label + "".join(draw.choice("0123456789abcdef") for _ in range(32))
        assert credential_in(name) is None, name


@pytest.mark.parametrize("label", ["APIKEY_OPENAI_{hex}", "SECRET_OPENAI_{hex}", "api_key_openai_{hex}",
                                   "openai_api_key_eu_{hex}", "api_key_alice_{hex}", "access_token_github_{hex}",
                                   "HF_TOKEN_WRITE_{hex}", "password_db_{hex}", "secret_key_aws_{hex}",
                                   "azure_key_westeurope_{hex}", "AZURE_OPENAI_API_KEY_EASTUS2_{hex}", "KEY_AZURE_{hex}",
                                   "keyprod_{hex}", "apikeyv2_{hex}", "{hex}_api_key", "run_{hex}_HF_TOKEN",
                                   # C9: a password's usual variable names, and pwd or auth glued to a word
                                   "DB_PASS_{hex}", "SMTP_PASS_{hex}", "admin_pass_{hex}", "ROOT_PASS-{hex}",
                                   "dbpass_{hex}", "dbpwd_{hex}", "clientauth_{hex}", "basicauth_{hex}",
                                   "pass-phrase-{hex}", "pass_word_{hex}", "accessToken_{hex}", "clientSecret{hex}",
                                   # battery 57, D1 and D2: version words inside a label, a scope after the secret word
                                   "api_key_prod_eu_west_{hex}", "api_key_v2_eu_west_{hex}", "OPENAI_API_KEY_PROJ_{hex}",
                                   "ADMIN_PASSWORD_SERVER_{hex}", "HF_TOKEN_SPACE_{hex}", "HF_TOKEN_MODEL_{hex}",
                                   "WANDB_API_KEY_RUN_{hex}", "api_key_set_{hex}", "DB_PASSWORD_DATA_{hex}",
                                   "api_key_openai_eastus_alice_{hex}", "api.key.prod.eu.west.{hex}",
                                   "apiKeyProdEuWest{hex}",
                                   # D11: the secret words of other languages; `private` alone
                                   "passwort_{hex}", "mot_de_passe_{hex}", "contrasena_{hex}", "senha_{hex}",
                                   "clave_api_{hex}", "wachtwoord_{hex}", "private_{hex}", "{hex}_private"])
def test_a_secret_word_followed_by_a_vendor_region_user_or_scope_still_names_a_secret(label):
    """Battery 56, C1: "the label's last word decides" (B9) read `api_key_openai_<hex>` as an `openai` id and wrote
    the key into run.json; and only the first word after hex was read (`<hex>_api_key`)."""
    draw = random.Random(label)
    for length in (32, 48):
        for _ in range(10):
            written = label.format(hex="".join(draw.choice("0123456789abcdef") for _ in range(length)))
            assert credential_in(written) == "what looks like an API key", written


@pytest.mark.parametrize("label", ["bos_token_", "eos-token-", "speech_token_", "audio_token_", "special_token_",
                                   "semantic_token_", "register_token_", "next_token_", "utt_key_", "spk_key_",
                                   "voice_key_", "sample_key_", "query_key_", "self_attn_key_", "chord_key_",
                                   "redis_key_", "bucket_key_", "sort_by_key_", "keys_dataset_", "private_eval_",
                                   "lakey_", "second-pass-", "lowpass_", "high_pass_", "bypass_", "compass_",
                                   "pass_rate_", "author_",
                                   # C11: the same words in camelCase, glued or not
                                   "partitionKey_", "rowKey_", "speakerKey-", "CacheKey_", "sortKey_", "cacheKey",
                                   "speakerKey",
                                   # battery 57: an upper-case label (D3), a two-letter word in camelCase (D4), more
                                   # things a token or key names, pass@k spelled, names ending in key (D5)
                                   "RUN_", "EXP_", "CKPT_", "CACHE_KEY_", "runId_", "jobId-", "eosTokenId_", "passAt1_",
                                   "toBeDeleted_", "token_f1_", "token_accuracy_", "token_classification_", "key_profile_",
                                   "pass_1_", "pass1_", "pass_k_", "pass_through_", "mickey_", "subtoken_",
                                   "private_dev_", "private_leaderboard_", "pass_hat_k_", "token_acc_", "key_acc_"])
def test_a_model_s_token_or_a_data_key_beside_a_hash_is_an_id(label):
    """Battery 56, C7: any word ending in token or key (B2) made `eos_token_<md5>` and `utt_key_<md5>` keys; a model's
    tokens and a record's keys are ids."""
    draw = random.Random(label)
    for length in (32, 24):
        for _ in range(10):
            name = label + "".join(draw.choice("0123456789abcdef") for _ in range(length))
            assert credential_in(name) is None, name
    for _ in range(10 if label[-1] in "-_" else 0):  # a UUID and a revision beside it too (battery 57, D3 and D4)
        for ident in (str(uuid.UUID(int=draw.getrandbits(128), version=4)),
                      "".join(draw.choice("0123456789abcdef") for _ in range(40))):
            assert credential_in(label + ident) is None, label + ident


@pytest.mark.parametrize("model", ["Qwen--Qwen2.5-Omni-7B", "Qwen--Qwen2-Audio-7B-Instruct", "openai--whisper-large-v3"])
def test_a_hub_cache_snapshot_folder_is_a_path_not_a_key(model):
    """Battery 53, Z3: `.../models--Qwen--Qwen2.5-Omni-7B/snapshots/<40 hex>` was one random base64 span (925 revisions
    in 1000), so that model's cache folder was refused as --model-path and redacted in messages."""
    from ihbench.dataset.redaction import redact_text

    draw = random.Random(model)
    for _ in range(100):
        folder = f"/root/.cache/huggingface/hub/models--{model}/snapshots/" + \
            "".join(draw.choice("0123456789abcdef") for _ in range(40))
        assert credential_in(folder) is None, folder
        assert redact_text(f"loading {folder}/config.json") == f"loading {folder}/config.json"


@pytest.mark.parametrize("name", ["ep01-ep02-ep03-ep04-ep05-ep06", "gpu0-gpu1-gpu2-gpu3-gpu4-gpu5",
                                  "en01-fr02-de03-es04-it05-pt06", "a100-h100-l40s-t4g4-a10g-v100"])
def test_a_series_of_groups_of_one_pattern_or_few_characters_is_a_name(name):
    """Battery 53, Z4: groups of one length were taken for a product key's even when every group had one pattern
    (`ep01`, `ep02`, ...) or the groups shared a few characters; random product keys stay found (the draws of
    `test_a_key_with_labels_or_an_extension_beside_it_is_still_a_key`)."""
    assert credential_in(name) is None and redact(name) == name


def test_keys_of_more_vendors_prefixes_are_found():
    """Battery 53, Z12: Shopify's `shpat_<32 hex>` and Firecrawl's `fc-<32 hex>` were hex beside a label (an id),
    Databricks' `dapi<32 hex>` and Notion's `ntn_...` failed the randomness test too often, and a GitLab token's or
    Langfuse's `sk-lf-<uuid>` body was judged part by part between its `-` and `_`."""
    import uuid

    draw = random.Random(53)
    letters = string.ascii_letters + string.digits

    def of(alphabet: str, n: int) -> str:
        return "".join(draw.choice(alphabet) for _ in range(n))

    shapes = {"shopify": lambda: draw.choice(["shpat_", "shpss_", "shpca_", "shppa_"]) + of("0123456789abcdef", 32),
              "databricks": lambda: "dapi" + of("0123456789abcdef", 32), "firecrawl": lambda: "fc-" + of("0123456789abcdef", 32),
              "notion": lambda: "ntn_" + of(string.digits, 11) + of(letters, 35),
              "gitlab": lambda: "glpat-" + of(letters + "-_", 20), "langfuse": lambda: f"sk-lf-{uuid.UUID(int=draw.getrandbits(128))}"}
    for shape, key in shapes.items():
        missed = [k for k in (key() for _ in range(300)) if credential_in(k) is None]
        assert len(missed) <= (0 if shape == "langfuse" else 15), (shape, missed[:3])
    for name in ("hf_hub_download_cache_01", "hf_cache_2024_12_07_qwen2audio_lora_r16_final", "fc-layer-weights-2024",
                 "sk-learn-audio-baseline", "dapi-docs",
                 # battery 54, A7: a word with a number among a name's parts
                 "fc-resnet50-voxceleb", "ntn_resnet50_voxceleb", "sk-lf-notes-2024"):
        assert credential_in(name) is None, name


def test_slack_cartesia_and_langsmith_keys_are_found_by_their_prefixes():
    """Battery 54, A5: Slack's user tokens (`xoxp-<digits>-<digits>-<digits>-<32 hex>`) were written as names and left
    whole in messages; app tokens (`xapp-`), Cartesia's `sk_car_`, LangSmith's `lsv2_pt_`, RubyGems' and Heroku's
    were missed often."""
    draw = random.Random(54)
    digits, hexits, letters = string.digits, "0123456789abcdef", string.ascii_letters + string.digits

    def of(alphabet: str, n: int) -> str:
        return "".join(draw.choice(alphabet) for _ in range(n))

    shapes = {"slack user": lambda: f"xoxp-{of(digits, 13)}-{of(digits, 13)}-{of(digits, 13)}-{of(hexits, 32)}",
              "slack legacy": lambda: f"xoxa-2-{of(digits, 12)}-{of(digits, 12)}-{of(digits, 12)}-{of(hexits, 32)}",
              "slack app": lambda: f"xapp-1-A{of(string.ascii_uppercase + digits, 10)}-{of(digits, 13)}-{of(hexits, 64)}",
              "cartesia": lambda: "sk_car_" + of(letters, 22),
              "langsmith": lambda: f"lsv2_pt_{of(hexits, 32)}_{of(hexits, 10)}",
              "gitlab": lambda: "glpat-" + of(letters + "-_", 20),
              "rubygems": lambda: "rubygems_" + of(hexits, 48),
              "heroku": lambda: f"HRKU-{of(hexits, 8)}-{of(hexits, 4)}-{of(hexits, 4)}-{of(hexits, 4)}-{of(hexits, 12)}",
              # battery 55, B10
              "jina": lambda: f"jina_{of(hexits, 32)}{of(letters, 28)}", "docker": lambda: "dckr_pat_" + of(letters + "-_", 27)}
    for shape, key in shapes.items():
        keys = [key() for _ in range(300)]
        missed = [k for k in keys if credential_in(k) is None or redact(k) == k]
        assert len(missed) <= (6 if shape in ("gitlab", "docker") else 0), (shape, missed[:3])
    for name in ("xapp-demo", "xoxo-gossip-girl", "lsv2_pt_notes", "sk_car_model_v2", "glpat-rotation-script",
                 "xapp-slack-bot-config-version2", "rubygems_mirror_2024", "HRKU-notes", "jina_embeddings_v3",
                 "dckr_pat_rotation"):
        assert credential_in(name) is None, name


def test_a_key_s_dot_joined_signature_is_hidden_with_it():
    """Battery 54, A10: a Mapbox secret token (`sk.<eyJ...>.<signature>`) found by its `eyJ` part first left the
    signature (22 characters, too short to be judged alone) in a recorded message when it held `-` or `_`."""
    draw = random.Random(10)
    urlsafe = string.ascii_letters + string.digits + "-_"
    for _ in range(200):
        signature = "".join(draw.choice(urlsafe) for _ in range(22))
        token = "sk.eyJ1Ijoi" + "".join(draw.choice(urlsafe) for _ in range(60)) + "." + signature
        assert signature not in redact(f"refused {token} here"), token


def test_folders_a_system_names_with_a_random_id_are_paths_not_keys():
    """Battery 54, A2: macOS's $TMPDIR (`/var/folders/st/<id>/T`), the Nix store, a shared Drive folder in Colab, a
    Modal volume and systemd's private /tmp were refused as keys (a user cannot rename them). A key elsewhere
    in such a path is still found."""
    from ihbench.dataset.redaction import redact_text

    draw = random.Random(54)

    def drawn(alphabet: str, n: int) -> str:
        return "".join(draw.choice(alphabet) for _ in range(n))

    lower, mixed, nix = string.ascii_lowercase + string.digits, string.ascii_letters + string.digits, \
        "0123456789abcdfghijklmnpqrsvwxyz"
    for _ in range(50):
        key = drawn(mixed, 32)
        for path in (f"/var/folders/{drawn(lower, 2)}/{drawn(lower, 9)}_{drawn(lower, 18)}0000gn/T/ihb-run",
                     f"/private/var/folders/{drawn(lower, 2)}/{drawn(lower, 24)}0000gp/T/gradio/call.wav",
                     f"/nix/store/{drawn(nix, 32)}-python3-3.11.9/lib",
                     f"/content/drive/.shortcut-targets-by-id/1{drawn(mixed + '-_', 32)}/models/qwen",
                     f"/__modal/volumes/vo-{drawn(mixed, 22)}/models",
                     f"/tmp/systemd-private-{drawn('0123456789abcdef', 32)}-ollama.service-{drawn(mixed, 6)}/tmp/m",
                     # battery 56, C2: PrivateTmp makes /var/tmp's twin too
                     f"/var/tmp/systemd-private-{drawn('0123456789abcdef', 32)}-vllm.service-{drawn(mixed, 6)}/m"):
            assert credential_in(path) is None and redact(path) == path and redact_text(f"at {path}") == f"at {path}"
            assert credential_in(f"{path}/{key}") == "what looks like an API key", path
        # battery 55, B1: a key where a system puts its id, in another shape, or a folder only named like a system's
        hexits = drawn("0123456789abcdef", 32)
        for path in (f"/var/folders/ab/{key}/T/run", f"/tmp/x/var/folders/ab/{drawn(lower, 24)}0000gn/{key}/T",
                     f"/tmp/systemd-private-{hexits}-x-{key}/x", f"/tmp/systemd-private-{hexits}-{key}.service-ab12cd/x",
                     f"/__modal/volumes/vo-{key}", f"error opening /var/folders/ab/{key}/T/x"):
            assert credential_in(path) == "what looks like an API key" and key not in redact_text(path), path
