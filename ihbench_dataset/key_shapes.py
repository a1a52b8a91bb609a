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
- it is hexadecimal and not 32 digits long: 40 and 64 are a git or Hub revision and a sha256, a file's
  hash; 32 standing alone is Azure's and AssemblyAI's key (and an MLflow run id, which is refused as a
  name too), while 32 after a word and a dash is an id's hash (`ihb-<32 hex>`, a batch request's id).

Runs split by `-` or `_` are judged joined when they mix capitals and small letters (a key in dash
groups, a `token_urlsafe` key), so no part of the key stays in clear; lower-case dashed names
(`wav2vec2-xlsr-53-espeak-cv-ft`) and a UUID's hex groups are judged part by part.
"""
from __future__ import annotations

import math
import re
from collections import Counter

#: the prefixes providers issue keys with: OpenAI, Anthropic, DeepSeek, OpenRouter (`sk-`), `sk_`, Hugging Face
#: `hf_`, GitHub (`ghp_`, ..., `github_pat_`), Groq `gsk_`, Cerebras `csk-`, Fireworks `fw_`, Together
#: `tgp_v1_`, xAI `xai-`, Perplexity `pplx-`, Replicate `r8_`, GitLab `glpat-`, NVIDIA `nvapi-`, Anyscale
#: `esecret_`, Google `AIza`, and a JSON web token's `eyJ`
KEY_PREFIX = (r"(?:sk-|sk_|hf_|gh[pousr]_|github_pat_|gsk_|csk-|fw_|tgp_v1_|xai-|pplx-|r8_|glpat-|nvapi-|esecret_"
              r"|AIza|eyJ)")
KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9])" + KEY_PREFIX + r"[A-Za-z0-9_-]{16,}")
#: after a prefix, a run this long of mixed case with digits is a key's body; no model name or folder of a
#: key's prefix has one (`sk-learn-classifier`, `hf_cache_2024`, `hf_checkpoint1500steps`)
_PREFIXED_RUN = 16
#: after a prefix, a run of one case with digits is a key's body from this length (DeepSeek's lower-case hex)
_PREFIXED_ONE_CASE_RUN = 32
#: without a prefix, a run is judged only from this length: shorter ones are too common in names
BARE_RUN = 24
#: a run of letters and digits, or of such runs joined by `-` and `_`
GROUP = re.compile(r"[-_]*[A-Za-z0-9]+(?:[-_]+[A-Za-z0-9]+)*[-_]*")
#: a date as names carry one (`gpt4oAudioPreview20241217`, `run_2025_03_26`), its parts joined
_DATE = re.compile(r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])")
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
    """A word of a key's prefix whose body is random: the prefix is evidence enough of a key's."""
    body = re.sub("^" + KEY_PREFIX, "", word)
    for run in re.findall(r"[A-Za-z0-9]+", body):
        digits, upper, lower = (bool(re.search(p, run)) for p in ("[0-9]", "[A-Z]", "[a-z]"))
        if digits and upper and lower and len(run) >= _PREFIXED_RUN:
            return True
        if digits and (upper or lower) and len(run) >= _PREFIXED_ONE_CASE_RUN:
            return True
    return False


def holds_a_random_run(text: str) -> bool:
    """`text` holds a run of letters and digits (or of dash groups) as random as a key's."""
    return any(map(is_random_group, GROUP.findall(text)))


def is_random_group(group: str) -> bool:
    """A run of letters and digits, or runs joined by `-`/`_` (as `GROUP` finds them), that is a key."""
    for run in re.findall(r"[A-Za-z0-9]{%d,}" % BARE_RUN, group):
        if _is_hex(run) and run != group.strip("-_"):  # an id's hash (`ihb-<32 hex>`); a key stands alone
            continue
        if _is_random(run):
            return True
    joined = re.sub(r"[-_]", "", group)
    mixed_case = re.search("[A-Z]", joined) and re.search("[a-z]", joined)
    return bool(len(group) >= BARE_RUN and joined != group and mixed_case and not _is_hex(joined) and
                _is_random(joined))


def _is_hex(run: str) -> bool:
    return bool(re.fullmatch(r"[0-9a-f]+|[0-9A-F]+", run))


def _is_random(run: str) -> bool:
    digits, upper, lower = (bool(re.search(p, run)) for p in ("[0-9]", "[A-Z]", "[a-z]"))
    if _is_hex(run):
        return len(run) == 32 and digits and (upper or lower)
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
