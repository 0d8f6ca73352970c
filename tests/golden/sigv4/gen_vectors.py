#!/usr/bin/python3
"""Generates the SigV4 golden vectors of s3land with botocore, an independent signer.

Run with Debian's system Python, which sees python3-botocore:
    /usr/bin/python3 tests/golden/sigv4/gen_vectors.py tests/golden/sigv4
It writes two files that tests/golden/test_sigv4.c reads; the test never needs botocore:
  aws-suite.json   the requests of the AWS SigV4 test suite (service "service", generic rules:
                   paths normalised and encoded again), inputs written down by us from the suite's
                   case list; before writing, botocore's answers are checked against signatures
                   published with the suite, so the two independent sources agree.
  s3-botocore.json S3 requests with hard keys, signed by botocore's S3SigV4Auth (no path
                   normalisation, keys encoded once with botocore's own percent_encode).
Each vector holds the inputs (method, wire path, decoded query pairs, headers, payload hash,
region, service, time, credentials) and every step: canonical request, string to sign,
signature and the Authorization header.
"""
import hashlib
import json
import os
import sys

from botocore.auth import SigV4Auth, S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

SUITE_TIME = "20150830T123600Z"
SUITE_CREDS = ("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", None)
S3_TIME = "20261130T043015Z"
S3_CREDS = ("AKIAS3LANDTEST000001", "s3land/Secret+Key=With/Odd+Chars0000000", None)
S3_CREDS_TOKEN = ("ASIAS3LANDTEST000002", "tmpSecret/0000+1111=2222/3333+4444=5555",
                  "FQoGZXIvYXdzE//////////wEaDtokenwith+plus/slash=equals==")

# Signatures published with the AWS SigV4 test suite (docs.aws.amazon.com, "Signature Version 4
# test suite"): botocore must reproduce them, or the generator refuses to write anything.
PUBLISHED = {
    "get-vanilla": "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    "get-header-key-duplicate":
        "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea",
}


class S3Cfg:
    def __init__(self, sign):
        self.s3 = {"payload_signing_enabled": sign}


def sign(auth_cls, creds, region, service, ts, method, url, headers, body=b"", params=None,
         unsigned=False):
    req = AWSRequest(method=method, url=url, data=body, params=params or {})
    for k, v in headers:
        req.headers[k] = v  # appends: repeated names stay repeated
    req.context["timestamp"] = ts
    if unsigned:
        req.context["client_config"] = S3Cfg(False)
    auth = auth_cls(Credentials(*creds), service, region)
    # the steps of add_auth, with the time pinned and each step kept (add_auth itself takes
    # utcnow() and returns only the header)
    prepared = req
    auth._modify_request_before_signing(prepared)
    cr = auth.canonical_request(prepared)
    sts = auth.string_to_sign(prepared, cr)
    sig = auth.signature(sts, prepared)
    auth._inject_signature_to_request(prepared, sig)
    signed = auth.headers_to_sign(prepared)
    hdrs = [[k, v] for k, v in prepared.headers.items()
            if k.lower() in signed and k.lower() != "authorization"]
    return {
        "method": method,
        "region": region,
        "service": service,
        "time": ts,
        "access_key": creds[0],
        "secret_key": creds[1],
        "session_token": creds[2] or "",
        "headers": hdrs,
        "payload_hash": cr.rsplit("\n", 1)[1],
        "body_hex": body.hex() if isinstance(body, bytes) else body.encode().hex(),
        "canonical_request": cr,
        "string_to_sign": sts,
        "signature": sig,
        "authorization": prepared.headers["Authorization"],
    }


def suite():
    host = [("Host", "example.amazonaws.com")]
    unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    # name, method, path, query pairs (decoded), extra headers, body
    cases = [
        ("get-vanilla", "GET", "/", [], [], b""),
        ("get-vanilla-query", "GET", "/", [], [], b""),
        ("get-vanilla-empty-query-key", "GET", "/", [("Param1", "value1")], [], b""),
        ("get-vanilla-query-order-key", "GET", "/", [("Param2", "value2"), ("Param1", "value1")],
         [], b""),
        ("get-vanilla-query-order-key-case", "GET", "/",
         [("Param2", "value2"), ("Param1", "value1")], [], b""),
        ("get-vanilla-query-order-value", "GET", "/",
         [("Param1", "value2"), ("Param1", "Value1")], [], b""),
        ("get-vanilla-query-unreserved", "GET", "/", [(unreserved, unreserved)], [], b""),
        ("get-vanilla-utf8-query", "GET", "/", [("\u1234", "bar")], [], b""),
        ("get-header-key-duplicate", "GET", "/", [],
         [("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")], b""),
        ("get-header-value-order", "GET", "/", [],
         [("My-Header1", "value4"), ("My-Header1", "value1"), ("My-Header1", "value3"),
          ("My-Header1", "value2")], b""),
        ("get-header-value-trim", "GET", "/", [],
         [("My-Header1", " value1"), ("My-Header2", ' "a   b   c" ')], b""),
        ("get-relative", "GET", "/example/..", [], [], b""),
        ("get-relative-relative", "GET", "/example1/example2/../..", [], [], b""),
        ("get-slash", "GET", "//", [], [], b""),
        ("get-slash-dot-slash", "GET", "/./", [], [], b""),
        ("get-slash-pointless-dot", "GET", "/./example", [], [], b""),
        ("get-slashes", "GET", "//example//", [], [], b""),
        ("get-space", "GET", "/example space/", [], [], b""),
        ("get-unreserved", "GET", "/" + unreserved, [], [], b""),
        ("get-utf8", "GET", "/\u1234", [], [], b""),
        ("post-vanilla", "POST", "/", [], [], b""),
        ("post-vanilla-query", "POST", "/", [("Param1", "value1")], [], b""),
        ("post-header-key-case", "POST", "/", [], [], b""),
        ("post-header-key-sort", "POST", "/", [], [("My-Header1", "value1")], b""),
        ("post-header-value-case", "POST", "/", [], [("My-Header1", "VALUE1")], b""),
        ("post-x-www-form-urlencoded", "POST", "/", [],
         [("Content-Type", "application/x-www-form-urlencoded")], b"Param1=value1"),
        ("post-x-www-form-urlencoded-parameters", "POST", "/", [],
         [("Content-Type", "application/x-www-form-urlencoded; charset=utf8")],
         b"Param1=value1"),
    ]
    out = []
    for name, method, path, query, extra, body in cases:
        url = "https://example.amazonaws.com" + path
        names = [k for k, _ in query]
        if len(set(names)) == len(names):
            params = dict(query)  # botocore encodes and sorts params itself
        else:
            # repeated names cannot be a dict: plain ASCII, so the URL form is already encoded
            url += "?" + "&".join(f"{k}={v}" for k, v in query)
            params = None
        v = sign(SigV4Auth, SUITE_CREDS, "us-east-1", "service", SUITE_TIME, method, url,
                 host + extra, body, params)
        v["name"] = name
        v["s3"] = False
        v["path"] = path
        v["query"] = [[k, val] for k, val in query]
        if name in PUBLISHED and v["signature"] != PUBLISHED[name]:
            sys.exit(f"botocore disagrees with the published suite on {name}")
        out.append(v)
    return out


def s3_cases():
    long_key = "k/" + "x" * 1022  # 1,024 bytes
    keys = [
        ("plain", "data/file.parquet"),
        ("space", "dir with space/file name.txt"),
        ("plus-equals", "a+b=c&d.txt"),
        ("at-paren", "user@host/(copy) [1].txt"),
        ("unicode", "d\u00e9j\u00e0/\u043a\u043b\u044e\u0447/\u65e5\u672c\u8a9e.txt"),
        ("percent-2f", "literal%2Fslash"),
        ("trailing-slash", "folder/"),
        ("empty-segments", "a//b///c"),
        ("unreserved", "-._~AZaz09"),
        ("reserved-mix", "!$'*,;:?#\"<>|\\^`{}"),
        ("long-1024", long_key),
    ]
    out = []
    for tag, key in keys:
        assert len(key.encode()) <= 1024
        for style in ("path", "virtual"):
            if style == "path":
                host, region = "127.0.0.1:17480", "us-east-1"
                path = "/bucket-1/" + percent_encode(key, safe="/~")
            else:
                host, region = "bucket-1.s3.eu-west-1.amazonaws.com", "eu-west-1"
                path = "/" + percent_encode(key, safe="/~")
            body = b"hello, world\n"
            v = sign(S3SigV4Auth, S3_CREDS, region, "s3", S3_TIME, "PUT",
                     "http://" + host + path, [("Host", host), ("Content-Length", str(len(body)))],
                     body)
            v.update(name=f"put-{tag}-{style}", s3=True, path=path, query=[], key=key,
                     bucket="bucket-1", style=style)
            out.append(v)
    host = "127.0.0.1:17480"
    # ListObjectsV2 with a prefix and a token that need encoding
    q = [("list-type", "2"), ("prefix", "dir with space/a+b=c/"),
         ("continuation-token", "1/aGVsbG8+d29ybGQ="), ("max-keys", "1000")]
    v = sign(S3SigV4Auth, S3_CREDS, "us-east-1", "s3", S3_TIME, "GET",
             f"http://{host}/bucket-1", [("Host", host)], b"", dict(q))
    v.update(name="list-objects-v2", s3=True, path="/bucket-1", query=q, key="", bucket="bucket-1",
             style="path")
    out.append(v)
    # CreateMultipartUpload (?uploads, empty value) with a session token and metadata
    q = [("uploads", "")]
    v = sign(S3SigV4Auth, S3_CREDS_TOKEN, "us-east-1", "s3", S3_TIME, "POST",
             f"http://{host}/bucket-1/x/y.parquet",
             [("Host", host), ("x-amz-meta-s3land-upload", "u-1"),
              ("x-amz-server-side-encryption", "AES256")], b"", dict(q))
    v.update(name="create-multipart-token", s3=True, path="/bucket-1/x/y.parquet", query=q,
             key="x/y.parquet", bucket="bucket-1", style="path")
    out.append(v)
    # UploadPart over https, payload unsigned, with Content-MD5
    q = [("partNumber", "7"), ("uploadId", "2~abc/def+ghi=")]
    body = b"part seven"
    md5 = __import__("base64").b64encode(hashlib.md5(body).digest()).decode()
    v = sign(S3SigV4Auth, S3_CREDS, "us-east-1", "s3", S3_TIME, "PUT",
             "https://s3.amazonaws.com/bucket-1/x/y.parquet",
             [("Host", "s3.amazonaws.com"), ("Content-MD5", md5),
              ("Content-Length", str(len(body)))], body, dict(q), unsigned=True)
    v.update(name="upload-part-unsigned", s3=True, path="/bucket-1/x/y.parquet", query=q,
             key="x/y.parquet", bucket="bucket-1", style="path")
    out.append(v)
    # conditional put and a copy source that is itself encoded
    v = sign(S3SigV4Auth, S3_CREDS, "us-east-1", "s3", S3_TIME, "PUT",
             f"http://{host}/bucket-1/_openetl/checkpoints/p.json",
             [("Host", host), ("If-None-Match", "*"),
              ("x-amz-copy-source", "/bucket-1/" + percent_encode("src key+1", safe="/~"))],
             b"", None)
    v.update(name="put-if-none-match-copy-source", s3=True,
             path="/bucket-1/_openetl/checkpoints/p.json", query=[],
             key="_openetl/checkpoints/p.json", bucket="bucket-1", style="path")
    out.append(v)
    return out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    for name, vecs in (("aws-suite.json", suite()), ("s3-botocore.json", s3_cases())):
        with open(os.path.join(outdir, name), "w", encoding="utf-8") as f:
            json.dump(vecs, f, indent=1, ensure_ascii=True)
            f.write("\n")
        print(f"{name}: {len(vecs)} vectors")


if __name__ == "__main__":
    main()
