"""Secrets from the environment or the lab never reach recorded output."""
from tr4947 import secrets
from tr4947.procedures import record


def test_env_secret_and_known_fields_are_masked(tmp_path, monkeypatch):
    monkeypatch.setenv("FSXADMIN_PASSWORD", "S3cr3t-value-42")
    rec = record.start("aws-fsx", "aws-fsx", "lab", tmp_path)
    rec.echo = False
    rec.console("FSX-1", "create", "aws fsx create-file-system --ontap-configuration "
                "FsxAdminPassword=S3cr3t-value-42",
                '{"FsxAdminPassword": "other-secret-xyz", "Size": 2048}')
    rec.table("FSX-2", "t", ["k", "v"], [["pw", "S3cr3t-value-42"]])
    rec.text("FSX-3", "t", "login with S3cr3t-value-42")
    text = rec.finish().read_text()
    assert "S3cr3t-value-42" not in text and "other-secret-xyz" not in text
    assert text.count(secrets.MASK) >= 4 and "2048" in text
    assert len(record.read(rec.path)["records"]) == 3     # still valid records


def test_printed_output_is_masked_too(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ONTAP_PASSWORD", "Printed-pw-77")
    rec = record.start("x", "x", "lab", tmp_path)
    rec.console("AFF-1", "t", "cmd", "password is Printed-pw-77")
    assert "Printed-pw-77" not in capsys.readouterr().out


def test_registered_secret_is_masked():
    secrets.register("lab-generated-pw-123")
    assert secrets.redact("ssh admin:lab-generated-pw-123@x") == "ssh admin:********@x"


def test_shell_reference_stays_readable():
    assert secrets.redact("FsxAdminPassword=${FSXADMIN_PASSWORD}") == \
        "FsxAdminPassword=${FSXADMIN_PASSWORD}"


def test_password_option_is_masked():
    assert secrets.redact("security login create -password hunter22 -user x") == \
        "security login create -password ******** -user x"


def test_plain_text_untouched():
    assert secrets.redact("volume show -fields size") == "volume show -fields size"


def test_ontap_logins_are_stored_as_hashes(tmp_path):
    from tr4947.lab.ontap import bootstrap
    bootstrap.ensure_passwords(tmp_path, {"admin": "tr4947-lab-secret-abc123"})
    stored = bootstrap.passwords_file(tmp_path).read_text()
    assert "tr4947-lab-secret" not in stored and "abc123" not in stored
    assert oct(bootstrap.passwords_file(tmp_path).stat().st_mode & 0o777) == "0o600"
    assert bootstrap.check_password(tmp_path, "admin", "tr4947-lab-secret-abc123")
    assert not bootstrap.check_password(tmp_path, "admin", "tr4947-lab-secret-abc124")
    assert not bootstrap.check_password(tmp_path, "fsxadmin", "tr4947-lab-secret-abc123")
    bootstrap.set_password(tmp_path, "fsxadmin", "new one")
    assert bootstrap.check_password(tmp_path, "fsxadmin", "new one")
    assert "new one" not in bootstrap.passwords_file(tmp_path).read_text()


def test_lab_secrets_are_derived_marked_and_stable():
    a = secrets.lab_secret(b"k" * 32, "ontap:admin")
    assert a.startswith(secrets.LAB_MARKER) and a == secrets.lab_secret(b"k" * 32, "ontap:admin")
    assert a != secrets.lab_secret(b"k" * 32, "ontap:fsxadmin")
    assert a != secrets.lab_secret(b"j" * 32, "ontap:admin")
    assert secrets.redact(f"x {a} y") == "x ******** y"       # the backstop, unregistered


def test_python_repr_and_quoted_values_are_masked():
    assert secrets.redact("{'FsxAdminPassword': 'has, comma and space'}") == \
        "{'FsxAdminPassword': '********'}"
    assert secrets.redact('password: "a b"') == 'password: "********"'
    assert secrets.redact("Password:\nnext line") == "Password:\nnext line"
