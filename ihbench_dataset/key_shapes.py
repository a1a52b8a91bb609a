"""What an API key looks like, so one pasted where a name goes is never written in clear.

Two kinds of evidence. A prefix a provider issues keys with (`sk-`, `hf_`, ...), followed by a random
body. Or, with no prefix we know (Mistral's, Cohere's, Azure's keys), a long run of letters and digits
that is as random as a key: a name is made of words, and words leave traces a random run does not.

A run is taken for a name when it shows structure a uniformly random key almost never has (each test is
a tail probability under "every character drawn at random", so about one key in a thousand is missed,
and a key is meant to come from the environment anyway):

- letter pairs common in English (`th`, `in`, `au`, `io`) are more frequent than chance gives;
- the kind of each character (digit, capital, small letter) depends on the one before it, as in CamelCase
  (a capital followed by small letters) or in `Run3Ep2Lr1e4` (a capital, a small letter, digits);
- it holds a date (`20241217`);
- it is a public record's id of a known shape: a Twilio SID (`RE<32 hex>`), a ULID (a time first);
- it is hexadecimal of 40 or 64 digits: a git or Hub revision, a sha256, a file's hash. Other lengths
  standing alone are keys (32: Azure's and AssemblyAI's; 48: `secrets.token_hex(24)`), and so is an MLflow
  run id (32), refused as a name too. Hex joined to a label by `-`, `_` or `.`, on either side, is an id
  (`ihb-<32 hex>`, a batch request's; `batch_<hex>`; `<hex>_eval`), not a key, unless the label says secret
  (`api_key_<hex>`, `secret-<hex>`, `Bearer_<hex>`): a key pasted alone, beside
  a random part (Zhipu's `<hex>.<secret>`), or from a shell's `$SECRET` (the environment's secrets are
  matched by value), is found. A file's extension is left out before any of this (`<key>.sqlite`).

Runs split by `-`, `_` or `.` are judged joined when they mix capitals and small letters and no part is
a word (a key in dash groups, a `token_urlsafe` key, Zhipu's `<id>.<secret>`; not `Qwen3-8B-unsloth-bnb-4bit`),
or when they are groups of one length (a product key's `XXXX-XXXX-XXXX`, wherever they stand among other
parts), so no part of the key stays in clear; labels at either end (`run_eval_`, `-backup-v2`, `-PROD1`, a
date) are left out and the rest judged again, and groups of one pattern or of few characters (`ep01-ep02-...`)
are a name's series; lower-case dashed names (`wav2vec2-xlsr-53-espeak-cv-ft`) and a UUID's groups are judged part by part. Base64's `+`, `/` and `=`
join its parts too (an AWS secret key), from the first part that starts a random span.
"""
from __future__ import annotations

import math
import re
from collections import Counter

#: the prefixes providers issue keys with: OpenAI, Anthropic, DeepSeek, OpenRouter (`sk-`), `sk_`, Hugging Face
#: `hf_`, GitHub (`ghp_`, ..., `github_pat_`), Groq `gsk_`, Cerebras `csk-`, Fireworks `fw_`, Together
#: `tgp_v1_`, xAI `xai-`, Perplexity `pplx-`, Replicate `r8_`, GitLab `glpat-`, NVIDIA `nvapi-`, Anyscale
#: `esecret_`, Google `AIza`, a JSON web token's `eyJ`, Shopify (`shpat_`, `shpss_`, `shpca_`, `shppa_`), Databricks
#: `dapi`, Notion `ntn_`, Firecrawl `fc-` (battery 53, Z12), Slack (`xoxp-`, `xoxb-`, ..., `xapp-`), LangSmith
#: `lsv2_pt_`/`lsv2_sk_`, Cartesia `sk_car_`, RubyGems `rubygems_`, Heroku `HRKU-` (battery 54, A5), Jina `jina_`,
#: Docker Hub `dckr_pat_` (battery 55, B10)
KEY_PREFIX = (r"(?:sk-|sk_car_|sk_|hf_|gh[pousr]_|github_pat_|gsk_|csk-|fw_|tgp_v1_|xai-|pplx-|r8_|glpat-|nvapi-|esecret_"
              r"|AIza|eyJ|shp(?:at|ss|ca|pa)_|dapi|ntn_|fc-|xox[abposre]-|xapp-|lsv2_(?:pt|sk)_|rubygems_|HRKU-|jina_|dckr_pat_)")
KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9])" + KEY_PREFIX + r"[A-Za-z0-9_-]{16,}")
#: prefixes no name shares (`glpat-`, Slack's `xoxp-`, Langfuse's `sk-lf-`): after one, a body of 20 characters or
#: more with digits and both cases, or of hex with digits, is a key's whatever words chance spells in it (a
#: GitLab token's 20 characters spelled one in 50, a UUID's hex `cafe` or `bead`; Anthropic's `sk-ant-api03-` and
#: OpenAI's `sk-proj-`: battery 64, K4, a body spelled in alphabet order was taken for a name's)
_ONLY_KEYS_PREFIX = re.compile(r"(?:github_pat_|glpat-|nvapi-|esecret_|tgp_v1_|shp(?:at|ss|ca|pa)_|xox[abposre]-|xapp-"
                               r"|lsv2_(?:pt|sk)_|sk_car_|rubygems_|HRKU-|sk-lf-|jina_|dckr_pat_"
                               r"|sk-ant-|sk-(?:proj|svcacct|admin)-|gh[pousr]_|gsk_|xai-|[sr]k_(?:live|test)_)")
#: after a prefix, a run this long of mixed case with digits is a key's body; no model name or folder of a
#: key's prefix has one (`sk-learn-classifier`, `hf_cache_2024`, `hf_checkpoint1500steps`)
_PREFIXED_RUN = 16
#: after a prefix, a run of one case with digits is a key's body from this length (DeepSeek's lower-case hex)
_PREFIXED_ONE_CASE_RUN = 32
#: without a prefix, a run is judged only from this length: shorter ones are too common in names
BARE_RUN = 24
#: a run of letters and digits, or of such runs joined by `-`, `_` or `.` (dash groups, token_urlsafe's
#: `-`/`_`, Zhipu's `<id>.<secret>`)
GROUP = re.compile(r"[-_.]*[A-Za-z0-9]+(?:[-_.]+[A-Za-z0-9]+)*[-_.]*")
_JOINERS = "-_."
#: a part of a group that may be a word (`unsloth`, `Omni`, `Instruct`), if its letter pairs are common
_WORD = re.compile(r"[A-Z]?[a-z]{2,}")
#: a label beside a hash in an id (`ihb`, `batch`, `eval`, `v2`, `seed1`, `PROD`)
_LABEL = re.compile(r"[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
#: a file's extension at a group's end (`.sqlite`, `.json`, `.mp3`, `.tar.gz`): letters, then a digit at most
#: (a key's dot groups have digits inside: battery 52), of at most three parts (with any number, every `.`
#: of a long dotted run was a start read to its end: time growing with its square)
_EXTENSION = re.compile(r"(?:\.[a-z]{1,11}[0-9]?){1,3}$")
#: a word of a variable's name that says it holds a credential, wherever it stands (`OPENAI_API_KEY_2`,
#: `SPEECH_KEY1`, `AZURE_KEY_PROD`), its digits aside
SECRET_WORDS = frozenset({"KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASS", "CREDENTIAL", "CREDENTIALS"})
#: the words that, ending the label beside hex, say it is a secret (`azure_openai_api_key_<hex>`,
#: `Ocp-Apim-Subscription-Key-<hex>`, `secret-<hex>-v2`, `auth-<hex>`): beside them hex is a key, not an id's
#: hash (battery 52, Y2; battery 54, A1; `_says_secret`). Not in a variable's name: `PWD` is the working folder
_SECRET_LABEL_WORDS = SECRET_WORDS | {"KEYS", "SECRETS", "PWD", "PASSPHRASE", "AUTH", "OAUTH", "AUTHORIZATION", "BEARER",
                                      "CRED", "CREDS", "PASSCODE"} | frozenset(
    # the same in the languages a team names its files in (battery 57, D11: `passwort_<hex>` was written as a name):
    # German, French (`mot_de_passe`: its last word), Spanish, Portuguese, Italian, Dutch, Swedish, Finnish, Polish,
    # Turkish, Russian spelled in Latin letters
    {"PASSWORT", "KENNWORT", "SCHLUESSEL", "SCHLUSSEL", "GEHEIMNIS", "PASSE", "MOTDEPASSE", "CONTRASENA",
     "CLAVE", "SENHA", "CHAVE", "CHIAVE", "PAROLA", "WACHTWOORD", "SLEUTEL", "LOSENORD", "NYCKEL", "SALASANA",
     "AVAIN", "HASLO", "KLUCZ", "SIFRE", "ANAHTAR", "PAROL", "KLYUCH"})
#: the ends of a word that make it a secret word, after any letters (`openaikey`, `primarykey`, `hftoken`,
#: `dbpassword`, `APIKEYS`; battery 55, B2), unless it is one of `_NOT_SECRET`
_SECRET_ENDS = ("KEY", "KEYS", "TOKEN", "SECRET", "SECRETS", "PASSWORD", "PASSWORDS", "PASSWD", "PASS", "PWD", "AUTH")
#: words that end so and say nothing of a secret (`monkey_<md5>`; battery 53, Z5); a plural of token names a
#: model's tokens (`tokens_<md5>.npy`)
_NOT_SECRET = frozenset({"MONKEY", "DONKEY", "TURKEY", "HOCKEY", "JOCKEY", "WHISKEY", "LACKEY", "SMOKEY", "HOTKEY",
                         "TURNKEY", "MONKEYS", "DONKEYS", "TURKEYS", "JOCKEYS", "HOTKEYS", "LAKEY", "MACKEY", "JOKEY",
                         "POKEY", "MICKEY", "STARKEY", "LATCHKEY", "MALARKEY", "HICKEY", "RICKEY", "SUBTOKEN"})
#: a word before `key` (or glued before it) that makes it an id's name, the hex a hash (`cache_key_<md5>`,
#: `speaker_key_<hex>`; battery 53, Z5); before another secret word (`group_secret_`) it does not (battery 55, B3).
#: Data, attention, music and store keys (`utt_key_`, `query_key_`, `chord_key_`, `redis_key_`, `sort_by_key_`) too
#: (battery 56, C7)
_ID_KEY_WORDS = frozenset({"CACHE", "HASH", "SPEAKER", "SORT", "PARTITION", "ROW", "LOOKUP", "INDEX", "IDEMPOTENCY",
                           "DEDUP", "PUBLIC", "SHARD", "ROUTING", "OBJECT", "RECORD", "ITEM", "FILE", "GROUP", "MUSIC",
                           "KV", "UTT", "UTTERANCE", "SPK", "VOICE", "AUDIO", "WAV", "SAMPLE", "DATASET", "EMOTION",
                           "LANG", "TASK", "QUERY", "ATTN", "ATTENTION", "ROTARY", "MUSICAL", "CHORD", "DICT", "REDIS",
                           "BUCKET", "BLOB", "ETAG", "LMCACHE", "BY", "SEGMENT", "CLIP", "TRACK"})
#: a word before `pass` (or glued before it) that makes it a decoding, rendering or filter pass, not a password's
#: label (`first_pass_`, `two_pass_decoding_`, `lowpass_`, `bypass_`); after any other word (`DB_PASS_`, `SMTP_PASS_`,
#: `dbpass_`) it is a password's (battery 56, C9: `pass` counted only alone)
_NOT_A_PASSWORD_BEFORE = frozenset({"FIRST", "SECOND", "THIRD", "FOURTH", "ONE", "TWO", "THREE", "SINGLE", "DOUBLE", "MULTI",
                                    "N", "K", "EACH", "LAST", "NEXT", "PREV", "PREVIOUS", "FORWARD", "BACKWARD", "BACK",
                                    "FWD", "BWD", "RENDER", "RENDERING", "SHADOW", "HIGH", "LOW", "BAND", "ALL", "BY", "COM",
                                    "SUR", "TRES", "OVER", "UNDER", "ENCOM", "FULL", "PARTIAL", "FINAL", "DECODING", "BEAM"})
#: a word before `token` that makes it a model's token, the hex a hash (`eos_token_<md5>`, `speech_token_<hex>`;
#: battery 56, C7); an access, session or cache token stays a secret
_ID_TOKEN_WORDS = frozenset({"BOS", "EOS", "PAD", "MASK", "UNK", "SEP", "CLS", "AUDIO", "SPEECH", "SEMANTIC", "ACOUSTIC",
                             "SPECIAL", "IMAGE", "VIDEO", "VISION", "TEXT", "SINK", "REGISTER", "PROMPT", "THINK", "END",
                             "START", "LORA", "SOFT", "CODEC", "UNIT", "PLACEHOLDER", "VOCAB", "NEXT"})
#: a label's words: `Ocp-Apim-Subscription-Key` and `AzureOpenAIKey` alike
_LABEL_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: letters glued to hex (`APIKEY<hex>`, `openaiApiKey<HEX>`): the letters end at the last letter hex has not
#: (the word's last letters may be hex's too: `password<hex>`)
_GLUED = re.compile(r"([A-Za-z]*[G-Zg-z])([0-9A-Fa-f]{%d,})" % BARE_RUN)


def _words(labels: list[str]) -> list[str]:
    return [word.upper() for label in labels for word in _LABEL_WORD.findall(label) if not word.isdigit()]


def _is_secret_word(word: str, before: str = "") -> bool:
    """A word of a label that says the hex beside it is a secret: one of `_SECRET_LABEL_WORDS`, or any word
    ending in one of `_SECRET_ENDS`, unless it names an id's key or a model's token (`before` it, or glued:
    `CACHEKEY`); with a version or environment glued after it (`keyprod`, `apikeyv2`) too (battery 56, C1)."""
    if word in _NOT_SECRET:
        return False
    end = next((end for end in _SECRET_ENDS if word.endswith(end)), None)
    ids = _ID_KEY_WORDS if end in ("KEY", "KEYS") else _ID_TOKEN_WORDS if end == "TOKEN" else \
        _NOT_A_PASSWORD_BEFORE if end == "PASS" else ()
    if ids and ((word == end and before in ids) or word[:-len(end)] in ids):
        return False
    if word in _SECRET_LABEL_WORDS or end is not None:
        return True
    glued = next((suffix for suffix in _SUFFIX_WORDS if word.endswith(suffix) and len(word) > len(suffix)), None)
    return glued is not None and _is_secret_word(word[:-len(glued)], before)


#: words after a label's secret word that a label ends with and that say nothing of what it names (`api_key_prod_`,
#: `secret-v2-`): left out before its last words are read
_SUFFIX_WORDS = frozenset({"PROD", "PRODUCTION", "DEV", "STAGING", "STAGE", "TEST", "BACKUP", "OLD", "NEW", "LIVE",
                           "MAIN", "SECONDARY", "ALT", "COPY", "FINAL", "TMP", "TEMP", "V"})
#: words right after a secret word that make it their modifier, the label a thing's, not a secret's (`token_ids_`,
#: `key_frames_`, `token_level_f1_`, `secret-santa-`, `ssh_key_fingerprint_`; battery 55, B9; battery 57, D5). Any
#: other word after it (a vendor, a region, a user, a scope: `api_key_openai_`, `HF_TOKEN_WRITE_`, `password_db_`,
#: `OPENAI_API_KEY_PROJ_`, `HF_TOKEN_SPACE_`) leaves it a secret's label (battery 56, C1; battery 57, D2: a scope's
#: words, `server`, `space`, `model`, `run`, `data`, are left out of this list: they name what a key is for)
_THING_WORDS = frozenset({"ID", "IDS", "IDX", "INDEX", "COUNT", "COUNTS", "NUM", "FRAME", "FRAMES", "LEVEL", "LEVELS",
                          "DETECTION", "DETECTOR", "SANTA", "SERVICE", "POINT", "POINTS", "VALUE", "VALUES",
                          "EMBEDDING", "EMBEDDINGS", "EMB", "LENGTH", "LEN", "SIZE", "TYPE", "TYPES", "NAME", "NAMES",
                          "MAP", "MAPPING", "DICT", "LIST", "BUDGET", "LIMIT", "USAGE", "STATS", "PHRASE", "PHRASES",
                          "FINGERPRINT", "CAPABILITY", "MANAGER", "ARN", "ROTATION", "POLICY", "SCHEMA", "FORMAT",
                          "SHAPE", "POSITION", "POSITIONS", "PROBS", "LOGITS", "LOGPROBS", "SCORE", "SCORES", "WEIGHTS",
                          "STATE", "STATES", "CACHE", "WORD", "WORDS", "AT", "K", "RATE", "RATES", "RATIO", "PCT",
                          "PERCENT", "FAIL", "EXPIRY", "EXPIRES", "PATH", "FILE", "HASH", "CLASSIFIER", "CLASSIFICATION",
                          "EXTRACTION", "ESTIMATION", "FINDING", "FINDINGS", "AREA", "SIGNATURE", "STRENGTH", "EVAL",
                          "EVALS", "DATASET", "SPLIT", "SAMPLE", "SAMPLES", "RESULT", "RESULTS", "OUTPUT", "OUTPUTS",
                          "LOG", "LOGS", "REPORT", "DIR", "FOLDER", "PREDICTION", "PREDICTIONS", "F", "ACC", "ACCURACY",
                          "LOSS", "TIMESTAMP", "TIMESTAMPS", "DURATION", "DURATIONS", "HEALING", "PRUNING", "MERGING",
                          "PROFILE", "MOMENTS", "TERMS", "TOPICS", "THROUGH", "CLIENT", "HAT"})
#: how many of a label's last words (past version and environment words) are read for a secret word, and of its
#: first words after hex (`openai_api_key_eu_`, `<hex>_api_key`); a secret word further in is a longer name's
_LABEL_REACH = 4
#: `pass@k` spelled in a label (`pass_1_`, `pass1_`, `pass_at_5_`, `pass_k_`): an eval's metric, not a password
_PASS_AT_K = re.compile(r"pass[-_.]?(?:at[-_.]?)?(?:[0-9]+|k)", re.IGNORECASE)


def _says_secret(before: list[str], after: list[str]) -> bool:
    """The label before hex, or the one after it, names a secret: a secret word (`_is_secret_word`) among its
    words nearest the hex (`_LABEL_REACH`; version and environment words, wherever they stand, are not counted:
    `api_key_prod_eu_west_`, battery 57, D1), and no word right after it that makes it a thing's (`_THING_WORDS`).
    `pass` after an order or a filter's word (`first_pass_`, `lowpass_`) is a decoding or filter pass, and
    `pass@k` spelled (`pass_1_`, `pass_at_1_`) an eval's."""
    if _PASS_AT_K.fullmatch("_".join(before)):
        return False
    if _words(before or after) == ["PRIVATE"]:  # `private_<hex>`; with any other word (`private_dev_`,
        return True  # `private_leaderboard_`: a split's name) it is no secret's label (battery 57, D5)
    words, after = _label_words(before), _label_words(after)
    return _secret_word_among(words, range(max(0, len(words) - _LABEL_REACH), len(words))) or \
        _secret_word_among(after, range(min(_LABEL_REACH, len(after))))


def _label_words(labels: list[str]) -> list[str]:
    """A label's words as a secret is read in them: a secret word spelled in two joined again (`pass-phrase`,
    `api_key`: its second half is no thing's word after it), version and environment words left out."""
    words: list[str] = []
    for word in _words(labels):
        if words and words[-1] + word in _SECRET_LABEL_WORDS:
            words[-1] += word
        else:
            words.append(word)
    return [word for word in words if word not in _SUFFIX_WORDS] or words[:1]


def _secret_word_among(words: list[str], places: range) -> bool:
    return any(_is_secret_word(words[at], words[at - 1] if at else "") and
               (at + 1 == len(words) or words[at + 1] not in _THING_WORDS) for at in places)


def _is_glued_secret(run: str) -> bool:
    """A secret word glued to the hex it names (`APIKEY<hex>`, `AzureOpenAIApiKey<hex>`, `openaikey<HEX>`), read
    as a label is (`apiKeyProdEuWest<hex>`: battery 57, D1)."""
    glued = _GLUED.fullmatch(run)
    if not glued:
        return False
    letters, rest = glued.groups()
    for taken in range(min(4, len(rest) - BARE_RUN) + 1):  # `passwor` + `d<hex>`: the word's own hex letters
        hexits = rest[taken:]
        if not _is_hex(hexits) or not re.search("[0-9]", hexits):
            continue
        if _says_secret([letters + rest[:taken]], []):
            return True
    return False


#: standard base64 (`+`, `/`, `=` padding): an AWS secret key's or an Azure storage key's alphabet
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
#: of a base64 run, at most this many parts between `/` are judged together (a key of 200 characters has
#: about 3 `/`): a long path is not judged in every combination of its folders
_BASE64_PARTS = 8
#: lengths of hexadecimal runs that are hashes (a git or Hub revision, a sha256), not keys
_HASH_LENGTHS = (40, 64)
#: a date as names carry one (`gpt4oAudioPreview20241217`, `run_2025_03_26`), its parts joined
_DATE = re.compile(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])")
#: ids of public records, by their issuers' shapes: Twilio's SIDs (two capitals and 32 hex: a call `CA...`, a
#: recording `RE...`, the name of its downloaded file) and a ULID (26 Crockford base32, a time in milliseconds
#: first); a call-centre export names its files by them (battery 52, Y6). Beside a key, the key is still found.
_TWILIO_SID = re.compile(r"[A-Z]{2}[0-9a-f]{32}")
_ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}", re.IGNORECASE)
_ULID_DIGITS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: a ULID's time, from 2016 to 2040 (a random run of its alphabet falls here about once in ten thousand)
_ULID_TIMES = (1_451_606_400_000, 2_208_988_800_000)
#: below this chance under randomness, a run's structure says it is a name
_STRUCTURE = 0.001
#: the 200 letter pairs most frequent in English, most frequent first
_COMMON_PAIRS = frozenset("""
th he in er an re on at en nd ti es or te of ed is it al ar st to nt ng se ha as ou io le ve co me de hi ri ro
ic ne ea ra ce li ch ll be ma si om ur ca el ta la ns di fo ho pe ec pr no ct us ac ot il tr ly nc et ut ss so
rs un lo wa ge ie wh ee wi em ad ol rt po we na ul ni ts mo ow pa im mi ai sh ir su id os iv ia am fi ci vi pl
ig tu ev ld ry mp fe bl ab gh ty op wo sa ay ex ke fr oo av ag if ap gr od bo sp rd do uc bu ei ov by rm ep tt
oc fa ef cu rn sc gi da yo cr cl du ga qu ue ff ba ey ls va um pp ua up lu go ht ru ug ds lt pi rc rr eg au ck
ew mu br bi pt ak pu ui rg ib tl ny ki rk ys ob""".split())


def is_prefixed_key(word: str) -> bool:
    """A word of a key's prefix whose body is random: the prefix is evidence enough of a key's. The body is
    judged joined across its `-` and `_` too (a GitLab token's, Langfuse's `sk-lf-<uuid>`; battery 53, Z12)."""
    body = re.sub("^" + KEY_PREFIX, "", word)
    joined = re.sub("[-_]", "", body)
    only = _ONLY_KEYS_PREFIX.match(word)
    rest = re.sub("[-_]", "", word[only.end():]) if only else ""
    if len(rest) >= 20 and re.search("[0-9]", rest) and \
            (_is_hex(rest) or (re.search("[A-Z]", rest) and re.search("[a-z]", rest))):
        return True
    if only and re.search("[A-Za-z0-9]{20,}", word[only.end():]):  # one run of 20 or more, whatever its letters
        return True  # (battery 67, N4: `sk-ant-api03-<lower-case letters>` was no key); words joined by `-` are a name
    # `hf_hub_download_cache_01`; a word with a number, `fc-resnet50-voxceleb` (battery 54, A7)
    words = any(_is_word(part) or (len(part.rstrip("0123456789")) >= 4 and _is_word(part.rstrip("0123456789")))
                for part in re.split("[-_]", body) if len(part) >= 3)
    mixed = re.search("[0-9]", joined) or (len(joined) >= 18 and re.search("[A-Z]", joined) and re.search("[a-z]", joined))
    if len(joined) >= _PREFIXED_RUN and mixed and not words and \
            (_is_hex(joined) or _is_random(joined)):
        return True
    for run in re.findall(r"[A-Za-z0-9]+", body):
        digits, upper, lower = (bool(re.search(p, run)) for p in ("[0-9]", "[A-Z]", "[a-z]"))
        if digits and upper and lower and len(run) >= _PREFIXED_RUN:
            return True
        if digits and (upper or lower) and len(run) >= _PREFIXED_ONE_CASE_RUN:
            return True
    return False


#: keys whose whole shape their provider fixes, found by that shape rather than by how random their letters look
#: (battery 58, E10: about one Hugging Face token in 2,000 spelled enough word pairs to pass as a name): a Hugging
#: Face token's 34 letters of both cases, SendGrid's `SG.<22>.<43>`, an AWS access key id's `AKIA` (`ASIA` for a
#: temporary one) and 16 capitals or digits (battery 61, H6: 20 characters, below the bare run's 24); a camelCase
#: name of exactly 34 letters is not one
_FIXED_SHAPE_KEY = re.compile(r"(?<![A-Za-z0-9])(?:hf_([A-Za-z]{34})"
                              r"|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|A[KS]IA[A-Z0-9]{16})(?![A-Za-z0-9])")


def _prefixed_key_spans(text: str) -> list[tuple[int, int]]:
    spans = [match.span() for match in KEY_SHAPED.finditer(text) if is_prefixed_key(match.group(0))]
    spans += [match.span() for match in _FIXED_SHAPE_KEY.finditer(text)
              if match.group(1) is None or not _is_compound(match.group(1))]
    return _merged(spans)


def holds_prefixed_key(text: str) -> bool:
    """`text` holds a provider's key by its prefix or shape (`sk-proj-...`, `hf_...`), wherever it stands: the
    rule for a name, a path and the texts a dataset copies (a source's turn, a benchmark's knowledge base)."""
    return bool(_prefixed_key_spans(text))


def without_prefixed_keys(text: str, replacement: str) -> str:
    """`text` with each provider's key `holds_prefixed_key` finds replaced by `replacement`."""
    return _replaced(text, _prefixed_key_spans(text), replacement)


def holds_a_random_run(text: str) -> bool:
    """`text` holds a run of letters and digits (or of dash groups, or of base64) as random as a key's."""
    return bool(random_spans(text))


def without_random_runs(text: str, replacement: str) -> str:
    """`text` with each run `holds_a_random_run` finds replaced by `replacement`."""
    return _replaced(text, random_spans(text), replacement)


def without_random_base64(text: str, replacement: str) -> str:
    """`text` with its random base64 runs replaced: in a URL, before its path is judged part by part (a
    key's parts between `/` are short)."""
    return _replaced(text, _merged(_base64_spans(text)), replacement)


def _replaced(text: str, spans: list[tuple[int, int]], replacement: str) -> str:
    out, position = [], 0
    for start, end in spans:
        out += [text[position:start], replacement]
        position = end
    return "".join(out) + text[position:]


#: folders an operating system or a platform names with a random id, in a path a user did not choose: macOS's
#: temporary folder (`/var/folders/st/<id>0000gn/T/`, $TMPDIR on every Mac), the Nix store (`/nix/store/<hash>-python3`),
#: a shared Google Drive folder in Colab (a Drive id: `1` and 32 more), a Modal volume (`vo-` and 22), systemd's
#: private /tmp (`systemd-private-<hex>-<unit>.service-<6>`) (battery 54, A2). Each id in the system's own shape, the
#: system folders where a path starts (battery 55, B1: a key of another shape there was left unjudged); the rest of
#: the path, a systemd unit's name too, is judged as any
_PATH_START = r"(?:^|(?<=[\s'\"(=:,]))"
_SYSTEM_FOLDER_IDS = re.compile(_PATH_START + r"(?:/private)?/var/folders/[a-z0-9_+]{2}/(?P<mac>[a-z0-9_+]{20,40}0000g[a-z])/[TCX](?=/|$)"
                                r"|" + _PATH_START + r"/nix/store/(?P<nix>[0-9a-df-np-sv-z]{32})-"
                                r"|/\.shortcut-targets-by-id/(?P<drive>1[A-Za-z0-9_-]{32})(?=/|$)"
                                r"|" + _PATH_START + r"/__modal/volumes/(?P<modal>vo-[A-Za-z0-9]{22})(?=/|$)"
                                r"|" + _PATH_START + r"(?:/var)?/tmp/systemd-private-(?P<unit>[0-9a-f]{32})-"
                                r"[A-Za-z0-9@._-]{1,100}?"
                                r"\.service-(?P<tail>[A-Za-z0-9]{6})(?=/|$)")


def _without_system_folder_ids(text: str) -> str:
    """`text` with the ids of `_SYSTEM_FOLDER_IDS` masked by `-` (a joiner: no run goes across it), of the same
    length, so that the spans found in it are the text's own."""
    if "/" not in text:
        return text
    masked = list(text)
    for match in _SYSTEM_FOLDER_IDS.finditer(text):
        for name, value in match.groupdict().items():
            if value is not None:
                start, end = match.span(name)
                masked[start:end] = "-" * (end - start)
    return "".join(masked)


def random_spans(text: str) -> list[tuple[int, int]]:
    """Where in `text` the runs as random as a key's are, in order, overlaps merged."""
    text = _without_system_folder_ids(text)
    spans = [match.span() for match in GROUP.finditer(text) if is_random_group(match.group(0))]
    return _merged(spans + _base64_spans(text))


def _base64_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _BASE64.finditer(text):
        if re.search(r"[+/=]", match.group(0)):
            spans += _random_base64_spans(text, match)
    return spans


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _random_base64_spans(text: str, match: "re.Match") -> list[tuple[int, int]]:
    """The random spans of a base64 run: its parts between `/` (a path's separator too) are joined, from
    the first part on, into the longest span that is random. A span does not start or end at a number or
    a lower-case word, so a port and a path's words (`8000/v1/deployments/`, `/chat`) stay out."""
    parts, position = [], match.start()
    for part in match.group(0).split("/"):
        parts.append((position, position + len(part)))
        position += len(part) + 1
    spans, first = [], 0
    while first < len(parts):
        if re.fullmatch(r"[0-9]*|[a-z]+[0-9]*", text[slice(*parts[first])]):  # a port, `v1`, `deployments`
            first += 1
            continue
        for last in range(min(len(parts), first + _BASE64_PARTS), first, -1):
            start, end = parts[first][0], parts[last - 1][1]
            span = text[start:end]
            joined = re.sub(r"[+/=]", "", span)
            if joined == span or re.fullmatch(r"[0-9]*|[a-z]+[0-9]*", text[slice(*parts[last - 1])]):
                continue  # one run of letters and digits (judged as such), or a span ending in a path's word
            if not re.search(r"[+=]", span) and all(_wordy(text[slice(*part)]) or _is_public_id(text[slice(*part)])
                                                     for part in parts[first:last]):
                continue  # an organisation and a name (`FunAudioLLM/SenseVoiceSmall`; battery 51, X3), or a record's id
            if any(_is_hash(text[slice(*part)]) for part in parts[first:last]):
                continue  # a folder of a revision (the Hub cache's `.../Omni-7B/snapshots/<40 hex>`; battery 53, Z3)
            if len(joined) >= BARE_RUN and re.search("[A-Z]", joined) and re.search("[a-z]", joined) and \
                    _is_random(joined):
                spans.append((start, end))
                first = last
                break
        else:
            first += 1
    return spans


#: how many parts on either side of a hex run its labels are read in (`_LABEL_REACH` words, past version words)
_NEAR = 12


def is_random_group(group: str) -> bool:
    """A run of letters and digits, or runs joined by `-`, `_`, `.` (as `GROUP` finds them), that is a key.
    A file's extension is left out first: `<key>.sqlite` is the key's (battery 51, X1)."""
    group = _EXTENSION.sub("", group)
    group = re.sub(r"[A-Za-z0-9]{26,}", lambda m: "id" if _is_public_id(m.group(0)) else m.group(0), group)
    core = group.strip(_JOINERS)
    parts = re.split(r"[-_.]+", core)
    # each run once, each part's kind once, and a label read near its run: one hex repeated thousands of times
    # was judged against every part for every copy (battery 57, D8: 80 s at 128 KB)
    not_labels = {part for part in parts if not (_LABEL.fullmatch(part) or _is_compound(part))}
    first = {}
    for index, part in enumerate(parts):
        first.setdefault(part, index)
    for run in dict.fromkeys(re.findall(r"[A-Za-z0-9]{%d,}" % BARE_RUN, group)):
        if _is_glued_secret(run):
            return True
        if _is_glued_id(run):
            continue
        at = first.get(run, len(parts))
        if _is_hex(run) and run != core and not_labels <= {run} and \
                not _says_secret(parts[max(0, at - _NEAR):at], parts[at + 1:at + 1 + _NEAR]):
            continue  # an id's hash (`ihb-<32 hex>`, `<hex>_eval`); beside a random part it is a key's (X2)
        if _is_random(run):
            return True
    if "".join(parts) == group:  # one run: judged above
        return False
    # with the labels at its ends left out too: `<key>-v2`, `run_eval_<key>`, `<key>-backup-v2` (battery 51, X1;
    # battery 52, Y1); and a product key's groups wherever they stand among other parts
    return _random_groups(parts) or _random_groups(_without_end_labels(parts)) or \
        any(_random_groups(run) or _random_groups(run[1:]) or _random_groups(run[:-1])
            for run in _runs_of_one_length(parts))


def _is_public_id(run: str) -> bool:
    """A Twilio SID or a ULID (`_TWILIO_SID`, `_ULID`): a record's id, not a key."""
    if _TWILIO_SID.fullmatch(run):
        return True
    if not _ULID.fullmatch(run):
        return False
    milliseconds = 0
    for character in run[:10].upper():
        milliseconds = milliseconds * 32 + _ULID_DIGITS.index(character)
    return _ULID_TIMES[0] <= milliseconds <= _ULID_TIMES[1]


#: the length from which a mixed-case run of groups is a key's even where a short part spells a word: a
#: `secrets.token_urlsafe(32)` is 43 characters with about two `-`/`_`; a model id that long has long words
_URLSAFE_LENGTH = 32


def _random_groups(parts: list[str]) -> bool:
    joined = "".join(parts)
    if len(joined) < BARE_RUN - 2:  # a 24-character token_urlsafe with its `-`s
        return False
    if any(re.search("[A-Z]", part) and re.search("[a-z]", part) for part in parts):  # groups of a mixed-case
        # key, unless one is a word: a model id's (`Qwen3-8B-unsloth-bnb-4bit`, `Qwen2.5-Omni-7B`; battery 50, W11).
        # Parts each of one case are not (`RUN_<md5>`, `CACHE_KEY_<uuid>`: an upper-case label; battery 57, D3)
        # A word of three letters or fewer is chance in a long key's groups (`_am-`, `_req_`: one `token_urlsafe(32)`
        # in 300 was missed; battery 58, E10), not a name's
        short_is_chance = len(joined) >= _URLSAFE_LENGTH
        return not any((_is_word(part) and not (short_is_chance and len(part) <= 3)) or _is_compound(part)
                       for part in parts) and _is_random(joined)
    if len(parts) >= 3 and len(parts[0]) >= 4 and len({len(part) for part in parts}) == 1:  # a product key's
        # groups of one case (`XXXX-XXXX-...`); a UUID's groups (8-4-4-4-12) are of several lengths
        letters_and_digits = re.search("[A-Za-z]", joined) and re.search("[0-9]", joined)
        return bool(letters_and_digits) and not _repeated_groups(parts) and (_is_hex(joined) or _is_random(joined))
    return False


def _repeated_groups(parts: list[str]) -> bool:
    """Groups of one pattern (`ep01-ep02-...`, `gpu0-gpu1-...`: letters and digits at the same places in
    every group) or of few characters (`a100-h100-l40s-...`): a name's series, which a product key's random
    groups almost never are (battery 53, Z4: such run names were refused)."""
    patterns = {re.sub("[A-Za-z]", "a", re.sub("[0-9]", "0", part)) for part in parts}
    if len(patterns) == 1:  # chance: at most a few in ten thousand keys of three groups or more
        return True
    joined = "".join(parts).lower()
    alphabet = 16 if _is_hex(joined) else 10 * bool(re.search("[0-9]", joined)) + 26 * bool(re.search("[a-z]", joined))
    return len(joined) <= 64 and _few_characters_chance(len(joined), len(set(joined)), alphabet) < _STRUCTURE


def _few_characters_chance(n: int, distinct: int, alphabet: int) -> float:
    """P(at most `distinct` different characters among `n` drawn at random from `alphabet`): the
    occupancy distribution, by the count of characters seen after each draw."""
    seen = [1.0] + [0.0] * alphabet  # seen[k]: the chance of k different characters so far
    for _ in range(n):
        seen = [seen[k] * k / alphabet + (seen[k - 1] * (alphabet - k + 1) / alphabet if k else 0.0)
                for k in range(alphabet + 1)]
    return sum(seen[:distinct + 1])


def _is_word(part: str) -> bool:
    """A part of a name (`unsloth`, `Omni`): letters of one word, at least half of their pairs common in
    English; a random key's part is so by chance about once in a hundred groups."""
    if not _WORD.fullmatch(part):
        return False
    pairs = [part[i:i + 2].lower() for i in range(len(part) - 1)]
    return 2 * sum(pair in _COMMON_PAIRS for pair in pairs) >= len(pairs)


def _is_compound(part: str) -> bool:
    """A label of words in camelCase (`cacheKey`, `partitionKey`, `speakerKey`): two words or more of three letters
    or more (`_is_word`), a number at its end at most. The same words as `cache_key`, so judged as they are
    (battery 56, C11: Azure Table's `partitionKey_<md5>` was refused). Acronyms and two-letter words are left
    out but for a few (`Id`, `At`: `_SHORT_WORDS`; battery 57, D4): a random url-safe key's parts spell such pieces
    often (`stG`, `usUYVaoK`)."""
    letters = part.rstrip("0123456789")
    words = _LABEL_WORD.findall(letters)
    return len(words) >= 2 and "".join(words) == letters and \
        all(word.upper() in _SHORT_WORDS or (len(word) >= 3 and not word.isupper() and _is_word(word))
            for word in words)


#: the two-letter words a camelCase label may hold (`runId`, `passAt1`, `toBeDeleted`; battery 57, D4)
_SHORT_WORDS = frozenset({"ID", "AT", "BY", "OF", "TO", "IN", "ON", "UP", "IS", "BE", "NO", "OK", "IO"})


def _is_glued_id(run: str) -> bool:
    """Hex glued to a camelCase label that names no secret (`cacheKey<md5>`, `speakerKey<hex>`): an id, as
    `cacheKey_<md5>` is (`_is_glued_secret` has found the secret ones first)."""
    glued = _GLUED.fullmatch(run)
    if not glued:
        return False
    letters, hexits = glued.groups()
    return _is_compound(letters) and _is_hex(hexits) and bool(re.search("[0-9]", hexits)) and \
        not _says_secret([letters], [])


def _without_end_labels(parts: list[str]) -> list[str]:
    """`parts` without the labels at either end (`run`, `eval`, `v2`, `Instruct`, `final2`, `PROD1`, a date),
    each of another shape than its neighbour (a product key's own group is of its neighbours'), while two
    parts or more are left: labels beside a key's groups do not make them a name's."""
    def label(part: str, neighbour: str) -> bool:
        return _shape(part) != _shape(neighbour) and _is_label(part) and not _group_of_digits(part, neighbour)

    first, last = 0, len(parts)  # indices, not slices: a run of thousands of labels is read once
    while last - first > 2 and label(parts[last - 1], parts[last - 2]):
        last -= 1
    while last - first > 2 and label(parts[first], parts[first + 1]):
        first += 1
    return parts[first:last]


def _is_label(part: str) -> bool:
    """A word (`backup`), a short label (`v2`, `run`), a word in any case with a number (`final2`, `PROD1`,
    `epoch3`), or a number (`1`, `20241217`)."""
    if part.isdigit() or _is_word(part) or (len(part) <= 4 and _LABEL.fullmatch(part)):
        return True
    letters = part.rstrip("0123456789")
    return bool(_LABEL.fullmatch(part)) and (letters.isupper() or letters.islower()) and _is_word(letters.lower())


def _runs_of_one_length(parts: list[str]) -> list[list[str]]:
    """The longest runs of neighbouring parts of one length and case (`x<key>`, `<key>-20241217`: the glued or
    dated part stands apart): a product key's groups among other parts, judged with and without the part at
    either end (a label of their shape, `<key>-FINAL`)."""
    runs: list[list[str]] = []
    lettered = ""  # the current run's first part with a letter: its shape is the run's
    for part in parts:
        if lettered and (_shape(part) == _shape(lettered) or _group_of_digits(part, lettered)):
            runs[-1].append(part)
        else:
            runs.append([part])
            lettered = part if re.search("[A-Za-z]", part) else ""
    return [run for run in runs if len(run) > 2]


def _group_of_digits(part: str, neighbour: str) -> bool:
    """A part of digits only, of its neighbour's length and no date: a product key's group that drew no
    letter (one in 170 of four characters), not a label."""
    return part.isdigit() and len(part) == len(neighbour) and not _DATE.fullmatch(part)


def _shape(part: str) -> tuple:
    """A part's length and cases (`AB1C`, `XY2Z` and `PMHH` alike, a product key's groups with or without
    digits; `eval` another)."""
    return len(part), *(bool(re.search(kind, part)) for kind in ("[A-Z]", "[a-z]"))


def _wordy(part: str) -> bool:
    """Most of `part`'s letters are in words (`FunAudioLLM`: Fun, Audio, LLM): a folder's or a model's name."""
    letters = sum(c.isalpha() for c in part)
    in_words = sum(len(word) for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", part)
                   if _is_word(word) or (word.isupper() and len(word) <= 4))
    return letters > 0 and in_words >= 0.7 * letters


def _is_hash(run: str) -> bool:
    return len(run) in _HASH_LENGTHS and _is_hex(run)


def _is_hex(run: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", run))


def _is_random(run: str) -> bool:
    digits, upper, lower = (bool(re.search(p, run)) for p in ("[0-9]", "[A-Z]", "[a-z]"))
    if _is_hex(run):
        return len(run) not in _HASH_LENGTHS and digits and (upper or lower)
    if not digits and not (upper and lower):  # one case of letters only: words run together
        return False
    if _DATE.search(run):
        return False
    return _combined(_common_pairs_chance(run), _kind_dependence_chance(run)) >= _STRUCTURE


def _common_pairs_chance(run: str) -> float:
    """The chance that random letters give as many common English pairs as `run` has, counting pairs
    within a word of it (`Audio` in `Qwen2AudioFor...`, or a run of capitals)."""
    words = [word.lower() for word in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", run)]
    pairs = [word[i:i + 2] for word in words for i in range(len(word) - 1)]
    common = sum(pair in _COMMON_PAIRS for pair in pairs)
    return _binomial_tail(len(pairs), common, len(_COMMON_PAIRS) / 26 ** 2)


def _binomial_tail(n: int, k: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p), in logarithms: a run of thousands of characters (a blob in a
    server's message) overflows the exact integers' conversion to float."""
    log_p, log_q, log_n = math.log(p), math.log1p(-p), math.lgamma(n + 1)
    return min(1.0, math.fsum(math.exp(log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p +
                                       (n - j) * log_q) for j in range(k, n + 1)))


def _kind_dependence_chance(run: str) -> float:
    """The chance of so strong a dependence between the kinds of neighbouring characters if they were
    drawn at random (a G-test of independence on the table of kind -> next kind)."""
    kinds = [0 if c.isdigit() else 1 if c.isupper() else 2 for c in run]
    pairs = Counter(zip(kinds, kinds[1:]))
    before, after = Counter(kinds[:-1]), Counter(kinds[1:])
    n = len(kinds) - 1
    g = 2 * sum(count * math.log(count * n / (before[a] * after[b])) for (a, b), count in pairs.items())
    freedom = (len(before) - 1) * (len(after) - 1)
    return _chi2_tail(g, freedom)


def _chi2_tail(x: float, freedom: int) -> float:
    """The chi-squared survival function for the degrees of freedom a table of 1 to 3 kinds has."""
    if freedom <= 0:
        return 1.0
    if freedom == 1:
        return math.erfc(math.sqrt(max(x, 0.0) / 2))
    if freedom == 2:
        return math.exp(-x / 2)
    if freedom == 4:
        return math.exp(-x / 2) * (1 + x / 2)
    raise ValueError(f"no table of kinds has {freedom} degrees of freedom")


def _combined(*chances: float) -> float:
    """Fisher's combination of independent tail probabilities (for two: chi-squared with 4 degrees)."""
    x = -2 * sum(math.log(max(chance, 1e-300)) for chance in chances)
    return _chi2_tail(x, 2 * len(chances))
