#!/usr/bin/python3
# The credentials chain against botocore (issue 11): for every setup below, a temporary HOME
# with ~/.aws files and a clean environment, botocore's answer
# (botocore.session.Session().get_credentials().method, Debian's python3-botocore) must name the
# same source that s3land's default chain reports (tests/tools/creds_source), and when both
# give keys, the same access key id. botocore is the independent oracle: no expected value here
# is written by hand except the setup itself.
#
# Outcomes compared: a method string; "none" (botocore: no credentials; s3land: AUTH_INVALID
# "no credentials found"); "error" (botocore raises; s3land fails with another error). Role and
# web identity setups: botocore returns deferred credentials (no network at this point) and
# names the method; s3land calls STS (AssumeRole, AssumeRoleWithWebIdentity) at the fake STS
# (AWS_ENDPOINT_URL_STS, which botocore 1.29 ignores; it never calls STS here) and reports the
# method of the answer. SSO setups: s3land refuses with UNSUPPORTED naming the source.
#
# The container, IMDS and STS setups talk to tests/support/fake-creds.mjs on 127.0.0.1, which
# both botocore and s3land reach. Prints the comparison table; exits 1 on any difference.
import json
import os
import stat
import subprocess
import sys
import tempfile

import botocore
import botocore.session

SRC = os.environ.get("S3L_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(os.environ.get("S3L_TOOLS_DIR", "build/tests/tools"), "creds_source")

PROCESS_JSON = {"Version": 1, "AccessKeyId": "AKIDPROCESS00001",
                "SecretAccessKey": "proc-secret-not-for-output",
                "SessionToken": "proc-token", "Expiration": "2099-01-01T00:00:00Z"}


def creds_file(*sections):
    return "".join(f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in kv.items()) + "\n"
                   for name, kv in sections)


def keys(kid):
    return {"aws_access_key_id": kid, "aws_secret_access_key": "secret-" + kid}


def setups(home, port):
    proc = os.path.join(home, "cred-proc.sh")
    proc_v2 = os.path.join(home, "cred-proc-v2.sh")
    tokfile = os.path.join(home, "web-token")
    env_keys = {"AWS_ACCESS_KEY_ID": "AKIDENVIRONMENT1", "AWS_SECRET_ACCESS_KEY": "env-secret"}
    role = {"role_arn": "arn:aws:iam::123456789012:role/r"}
    return [
        ("env keys only", {}, {}, env_keys, None),
        ("env key id without secret", {}, {}, {"AWS_ACCESS_KEY_ID": "AKIDENVNOSECRET1"}, None),
        ("credentials [default], region there", {"credentials": [("default", dict(keys("AKIDCREDDEFAULT1"), region="ap-south-2"))],
                                                 "config": [("default", {"region": "us-west-1"})]}, {},
         {}, None),
        ("config [default] keys", {"config": [("default", keys("AKIDCONFDEFAULT1"))]}, {}, {},
         None),
        ("config [profile dev], AWS_PROFILE=dev",
         {"config": [("profile dev", dict(keys("AKIDCONFIGDEV001"), region="eu-west-3")),
                     ("default", keys("AKIDNOTTHIS00001"))]},
         {}, {"AWS_PROFILE": "dev"}, None),
        ("config [dev] (no 'profile'), AWS_PROFILE=dev",
         {"config": [("dev", keys("AKIDCONFIGDEV002"))]}, {}, {"AWS_PROFILE": "dev"}, None),
        ("credentials [dev] and config [profile dev]",
         {"credentials": [("dev", keys("AKIDCREDDEV00001"))],
          "config": [("profile dev", keys("AKIDCONFDEV00001"))]}, {}, {"AWS_PROFILE": "dev"}, None),
        ("conflict: env keys and AWS_PROFILE=dev",
         {"credentials": [("dev", keys("AKIDCREDDEV00002"))]}, {},
         dict(env_keys, AWS_PROFILE="dev"), None),
        ("conflict: env keys and explicit profile dev",
         {"credentials": [("dev", keys("AKIDCREDDEV00003"))]}, {}, env_keys, "dev"),
        ("AWS_DEFAULT_PROFILE over AWS_PROFILE",
         {"credentials": [("a", keys("AKIDPROFILEA0001")), ("b", keys("AKIDPROFILEB0001"))]}, {},
         {"AWS_DEFAULT_PROFILE": "a", "AWS_PROFILE": "b"}, None),
        ("AWS_PROFILE names a missing profile", {"credentials": [("default", keys("AKIDX0000001"))]},
         {}, dict(env_keys, AWS_PROFILE="missing"), None),
        ("files moved by AWS_SHARED_CREDENTIALS_FILE",
         {"elsewhere/creds": [("default", keys("AKIDMOVEDFILE001"))]}, {},
         {"AWS_SHARED_CREDENTIALS_FILE": os.path.join(home, "elsewhere/creds")}, None),
        ("credential_process in config",
         {"config": [("default", {"credential_process": proc})]}, {}, {}, None),
        ("credential_process in credentials",
         {"credentials": [("default", {"credential_process": proc})]}, {}, {}, None),
        ("credential_process and keys in config",
         {"config": [("default", dict(keys("AKIDCONFNOTPROC1"), credential_process=proc))]}, {},
         {}, None),
        ("keys in credentials, credential_process in config",
         {"credentials": [("default", keys("AKIDCREDOVERPROC"))],
          "config": [("default", {"credential_process": proc})]}, {}, {}, None),
        ("credential_process answers Version 2",
         {"config": [("default", {"credential_process": proc_v2})]}, {}, {}, None),
        ("conflict: keys and role_arn in one profile",
         {"credentials": [("default", dict(keys("AKIDROLEKEYS0001"), source_profile="default"))],
          "config": [("default", role)]}, {}, {}, None),
        ("role_arn with source_profile",
         {"credentials": [("base", keys("AKIDBASEPROFILE1"))],
          "config": [("profile dev", dict(role, source_profile="base"))]}, {},
         {"AWS_PROFILE": "dev"}, None),
        ("role_arn with credential_source Environment (explicit profile)",
         {"config": [("profile dev", dict(role, credential_source="Environment"))]}, {},
         env_keys, "dev"),
        ("role chained through two source profiles, external_id, duration",
         {"credentials": [("base", keys("AKIDBASEPROFILE2"))],
          "config": [("profile mid", dict(role, source_profile="base")),
                     ("profile top", {"role_arn": "arn:aws:iam::123456789012:role/external",
                                      "source_profile": "mid", "external_id": "ext-good",
                                      "duration_seconds": "900",
                                      "role_session_name": "s3land-test"})]}, {},
         {"AWS_PROFILE": "top"}, None),
        ("conflict: env keys and AWS_PROFILE naming a role",
         {"credentials": [("base", keys("AKIDBASEPROFILE3"))],
          "config": [("profile dev", dict(role, source_profile="base"))]}, {},
         dict(env_keys, AWS_PROFILE="dev"), None),
        ("conflict: env keys and an explicit role profile",
         {"credentials": [("base", keys("AKIDBASEPROFILE4"))],
          "config": [("profile dev", dict(role, source_profile="base"))]}, {}, env_keys, "dev"),
        ("role_arn whose source_profile makes a loop",
         {"config": [("profile a", dict(role, source_profile="b")),
                     ("profile b", dict(role, source_profile="a"))]}, {}, {"AWS_PROFILE": "a"},
         None),
        ("web identity in a profile (web_identity_token_file)",
         {"config": [("default", {"role_arn": "arn:aws:iam::123456789012:role/web",
                                  "web_identity_token_file": tokfile,
                                  "role_session_name": "web-session"})]},
         {"web-token": "header.payload.sig"}, {}, None),
        ("web identity env with AWS_ROLE_SESSION_NAME over env keys",
         {}, {"web-token": "header.payload.sig"},
         dict(env_keys, AWS_WEB_IDENTITY_TOKEN_FILE=tokfile, AWS_ROLE_ARN=role["role_arn"],
              AWS_ROLE_SESSION_NAME="pod"), None),
        ("role_arn with a missing source_profile",
         {"config": [("default", dict(role, source_profile="nope"))]}, {}, {}, None),
        ("web identity env over a credentials file",
         {"credentials": [("default", keys("AKIDCREDNOTWEB01"))]}, {"web-token": "header.payload.sig"},
         {"AWS_WEB_IDENTITY_TOKEN_FILE": tokfile, "AWS_ROLE_ARN": role["role_arn"]}, None),
        ("sso profile",
         {"config": [("default", {"sso_start_url": "https://x.awsapps.com/start",
                                  "sso_region": "us-east-1", "sso_account_id": "123456789012",
                                  "sso_role_name": "r"})]}, {}, {}, None),
        ("nothing anywhere", {}, {}, {}, None),
        # configparser continues a value only on a line indented deeper than its key's: a
        # section pasted with every line indented holds keys (a break-it run found s3land
        # reading the second key as part of the first one's value)
        ("credentials with every line indented", {},
         {".aws/credentials": "[default]\n  aws_access_key_id = AKIDINDENTED0001\n"
                              "  aws_secret_access_key = indented-secret\n  region = eu-west-1\n"},
         {}, None),
        # botocore reads a config file only when it is a file (os.path.isfile): a directory is
        # skipped, not an error (s3land failed the chain with IO; a break-it run)
        ("AWS_CONFIG_FILE naming a directory", {"credentials": [("default", keys("AKIDCONFIGISDIR1"))]},
         {"confdir/placeholder": ""}, {"AWS_CONFIG_FILE": os.path.join(home, "confdir")}, None),
        ("[DEFAULT] gives the profile its secret", {},
         {".aws/credentials": "[DEFAULT]\naws_secret_access_key = shared-secret\n"
                              "[dev]\naws_access_key_id = AKIDDEVFROMDEF01\n"},
         {"AWS_PROFILE": "dev"}, None),
        ("container FULL_URI with a token", {}, {},
         {"AWS_CONTAINER_CREDENTIALS_FULL_URI": f"http://127.0.0.1:{port}/container/creds",
          "AWS_CONTAINER_AUTHORIZATION_TOKEN": "Bearer fake-container-token"}, None),
        ("IMDSv2 on its endpoint", {"credentials": [("other", keys("AKIDOTHERPROF001"))]}, {},
         {"AWS_EC2_METADATA_SERVICE_ENDPOINT": f"http://127.0.0.1:{port}/",
          "AWS_EC2_METADATA_DISABLED": None}, None),
    ]


def write_home(home, files, extra):
    for rel, sections in files.items():
        path = os.path.join(home, ".aws", rel) if "/" not in rel else os.path.join(home, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(creds_file(*sections))
    for rel, text in extra.items():
        os.makedirs(os.path.dirname(os.path.join(home, rel)), exist_ok=True)
        with open(os.path.join(home, rel), "w") as f:
            f.write(text)
    for name, doc in (("cred-proc.sh", PROCESS_JSON), ("cred-proc-v2.sh", dict(PROCESS_JSON, Version=2))):
        path = os.path.join(home, name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\ncat <<'EOF'\n" + json.dumps(doc) + "\nEOF\n")
        os.chmod(path, stat.S_IRWXU)


def environment(home, env, port):
    e = {"PATH": "/usr/bin:/bin", "HOME": home, "AWS_EC2_METADATA_DISABLED": "true",
         "AWS_ENDPOINT_URL_STS": f"http://127.0.0.1:{port}/"}
    for k, v in env.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def abbreviate(kid):
    return kid if len(kid) <= 8 else kid[:4] + "..." + kid[-4:]


def botocore_says(env, profile):
    """botocore's answer under env (os.environ is swapped for the call: botocore reads it, and
    HOME, when a session resolves credentials)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    out = {}
    try:
        s = botocore.session.Session(profile=profile)
        c = s.get_credentials()
        if c is None:
            out["outcome"] = "none"
        else:
            out["outcome"] = c.method
            # deferred credentials (roles, SSO) would call STS or SSO here: not read
            if c.method not in ("assume-role", "assume-role-with-web-identity", "sso"):
                out["key"] = c.access_key
        try:
            out["region"] = s.get_config_variable("region")
        except Exception:
            pass
    except Exception as e:  # botocore refuses the setup: the outcome is "error"
        out["outcome"] = "error"
        out["why"] = type(e).__name__
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out


def s3land_says(env, profile):
    argv = [TOOL] + (["--profile", profile] if profile else [])
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    line = r.stdout.strip()
    fields = dict(kv.split("=", 1) for kv in line.split(" ")[:5] if "=" in kv)
    if line.startswith("method="):
        return {"outcome": fields["method"], "key": fields["key"],
                "region": None if fields["region"] == "-" else fields["region"], "line": line}
    code = fields.get("error", "?")
    message = line.split("message=", 1)[1] if "message=" in line else ""
    if code == "AUTH_INVALID" and message.startswith("no credentials found"):
        return {"outcome": "none", "line": line}
    if code == "UNSUPPORTED":
        return {"outcome": message.split(":", 1)[0], "line": line}  # the source that refused
    return {"outcome": "error", "line": line}


def start_fake():
    p = subprocess.Popen(["node", os.path.join(SRC, "tests/support/fake-creds.mjs"),
                          "--auth", "Bearer fake-container-token", "--idle", "300"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = p.stdout.readline().split()
    if len(first) != 2 or first[0] != "LISTENING":
        raise RuntimeError("fake-creds.mjs did not start")
    return p, int(first[1])


def main():
    print(f"botocore {botocore.__version__} from {os.path.dirname(botocore.__file__)}")
    fake, port = start_fake()
    rows, failures = [], 0
    secrets = ["secret-", "proc-secret-not-for-output", "imds-secret-not-for-output",
               "container-secret-not-for-output", "env-secret", "proc-token",
               "sts-secret-not-for-output", "sts-token-not-for-output", "header.payload"]
    try:
        with tempfile.TemporaryDirectory() as root:
            for i, (name, files, extra, env, profile) in enumerate(setups("HOME", port)):
                home = os.path.join(root, f"h{i}")
                os.makedirs(home)
                # the setups were built with a placeholder HOME: put the real one in
                fix = lambda v: v.replace("HOME", home, 1) if isinstance(v, str) and v.startswith("HOME") else v
                files = {k: [(s, {a: fix(b) for a, b in kv.items()}) for s, kv in secs]
                         for k, secs in files.items()}
                env = {k: fix(v) for k, v in env.items()}
                write_home(home, files, extra)
                e = environment(home, env, port)
                boto, ours = botocore_says(e, profile), s3land_says(e, profile)
                ok = boto["outcome"] == ours["outcome"]
                if ok and "key" in boto and boto["outcome"] not in ("none", "error"):
                    ok = abbreviate(boto["key"]) == ours.get("key")
                if ok and boto.get("region") and "region" in ours:
                    ok = boto["region"] == ours["region"]
                if any(s in ours["line"] for s in secrets):
                    print(f"  SECRET in s3land's output for {name!r}")
                    ok = False
                failures += not ok
                boto_col = boto["outcome"] + (f" ({boto['why']})" if "why" in boto else "")
                rows.append((name, boto_col, ours["outcome"], "ok" if ok else "DIFFERS"))
                if not ok:
                    print(f"  {name}: botocore {boto} s3land {ours['line']}")
    finally:
        fake.stdin.close()
        fake.wait(timeout=10)
    w = max(len(r[0]) for r in rows)
    print(f"| {'setup'.ljust(w)} | botocore | s3land | |")
    for r in rows:
        print(f"| {r[0].ljust(w)} | {r[1]} | {r[2]} | {r[3]} |")
    if len(rows) < 12:
        print("fewer than 12 setups")
        return 1
    print(f"{len(rows) - failures} of {len(rows)} setups agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
