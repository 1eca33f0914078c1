"""Secrets from the environment never reach recorded output."""
from tr4947.runbook import open_runbook, secrets


def test_env_secret_and_known_fields_are_masked(tmp_path, monkeypatch):
    monkeypatch.setenv("FSX_ADMIN_PASSWORD", "S3cr3t-value-42")
    rec = open_runbook("aws-fsx", "aws-fsx", target="lab", results_dir=tmp_path)
    rec.console("FSX-1", "create", "aws fsx create-file-system --ontap-configuration "
                "FsxAdminPassword=S3cr3t-value-42",
                '{"FsxAdminPassword": "other-secret-xyz", "Size": 2048}')
    rec.finish()
    text = (tmp_path / "aws-fsx.json").read_text()
    assert "S3cr3t-value-42" not in text and "other-secret-xyz" not in text
    assert text.count(secrets.MASK) >= 2 and "2048" in text


def test_registered_secret_is_masked():
    secrets.register("lab-generated-pw-123")
    assert secrets.redact("ssh admin:lab-generated-pw-123@x") == "ssh admin:********@x"


def test_plain_text_untouched():
    assert secrets.redact("volume show -fields size") == "volume show -fields size"
