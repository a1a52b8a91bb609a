"""Every OpenAI-compatible client of a process shares one certificate-checking TLS context, built once
per certificate setting (issue 29: building it reads the whole CA bundle, about 50 ms of CPU a client)."""
import openai
import pytest

from loaders.clients import openai_client


def _context(client):
    return client._client._transport._pool._ssl_context


def test_clients_share_one_tls_context_per_certificate_setting(monkeypatch):
    certifi = pytest.importorskip("certifi")
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    made = [openai_client(kind, base_url="http://127.0.0.1:9/v1", api_key_env="IHBENCH_TEST_NO_KEY", timeout=5)
            for kind in (openai.OpenAI, openai.AsyncOpenAI, openai.OpenAI)]
    assert len({id(_context(client)) for client in made}) == 1
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())  # another bundle: its own context, not the shared one
    other = openai_client(openai.OpenAI, base_url="http://127.0.0.1:9/v1", api_key_env="IHBENCH_TEST_NO_KEY",
                          timeout=5)
    assert _context(other) is not _context(made[0])
    assert _context(other).verify_mode == _context(made[0]).verify_mode != 0  # both check certificates
