#!/usr/bin/env python3
"""Writes the malformed-input corpus and its manifest (cases.tsv) next to this script.

Run it after changing a case: `python3 Tests/IAPGuardTests/Fixtures/malformed/make-corpus.py`.
The files are committed; the tests (Tests/IAPGuardTests/Hardening/) only read them.

Manifest columns (tab-separated): file, format, expect, reason substring.

expect:
  quarantine      the record is put between two good ones (line 2); it must be quarantined at `file:2` with
                  the reason, and both good records stored
  quarantine@L    the file is used whole; a record must be quarantined at line L with the reason
  failed          wrapped like `quarantine`; the record is kept as a sighting whose verification failed
                  (the Apple-record quarantine) with `reason: detail` containing the text
  ok:N            the record (wrapped) or file (whole) is fine: N records stored, nothing quarantined
  source-error    the whole source fails with an error naming the file and the problem; other sources run
  config-error    Config.load throws a ConfigError naming the file (and key) with the text
  rule-error      RuleSet.load reports the file with a line and the text; the good rule beside it loads
  rule-issue      the rule loads but `rules validate` reports an error with a line and the text
  trust-error     JWSVerifier.make(for:) throws a ConfigError naming the certificate file with the text
  fx-error        FXRateFile.load throws an error naming `file:line` with the text (the file cannot be used)
  fx-bad-row      FXRateFile.load keeps the good rows and reports the bad row as `file:line` with the text
  fx-conflict     FXRateFile.load reports a conflict naming both lines (`file:L1` and `:L2`) with the text
  partial         the file used whole as a source (format source-*): the source is in error (the run is
                  `partial`, exit 69) with a message containing the text
  warning         the file used whole as a source: a warning containing the text; the source is not in error
"""
import base64
import bz2
import gzip
import io
import json
import lzma
import os
import shutil
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
cases = []


def b64u(data):
    if isinstance(data, str):
        data = data.encode()
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwsof(header, payload, signature=b"\x01" * 64):
    h = header if isinstance(header, (bytes, str)) else json.dumps(header, separators=(",", ":"))
    p = payload if isinstance(payload, (bytes, str)) else json.dumps(payload, separators=(",", ":"))
    return f"{b64u(h)}.{b64u(p)}.{b64u(signature)}"


def add(fmt, name, content, expect, reason):
    folder = os.path.join(HERE, fmt)
    os.makedirs(folder, exist_ok=True)
    ext = {
        "receipts": "jsonl", "signed": "jsonl", "notifications": "jsonl", "credits": "jsonl", "orders-jsonl": "jsonl",
        "orders-csv": "csv", "credits-csv": "csv", "orders-csv-file": "csv", "fx": "csv", "config": "yml",
        "rules": "yaml", "trust": "der", "sqlite": "sql", "sqlite-raw": "db", "source-orders-jsonl": "jsonl",
        "source-orders-csv": "csv", "source-credits-csv": "csv",
    }[fmt]
    if name.endswith(".pem"):
        ext, name = "pem", name[:-4]
    path = f"{fmt}/{name}.{ext}"
    data = content.encode() if isinstance(content, str) else bytes(content)
    with open(os.path.join(HERE, path), "wb") as f:
        f.write(data)
    assert "\t" not in reason and "\n" not in reason
    cases.append((path, fmt, expect, reason))


# ---------------------------------------------------------------- shared bad JSON lines
BAD_JSON = [
    ("truncated-object", '{"status":0,"receipt":{"bundle_id":"com.example.coins"', "malformed JSON"),
    ("single-quotes", "{'status':0}", "malformed JSON"),
    ("unquoted-key", "{status:0}", "malformed JSON"),
    ("nan-literal", '{"status":NaN}', "malformed JSON"),
    ("comment", '{"status":0} // note', "malformed JSON"),
    ("two-objects-on-one-line", '{"status":0}{"status":0}', "malformed JSON"),
    ("top-level-array", '[{"status":0}]', "expected a JSON object, found an array"),
    ("top-level-string", '"status"', "expected a JSON object, found text"),
    ("top-level-number", "42", "expected a JSON object, found a number"),
    ("top-level-null", "null", "expected a JSON object, found null"),
    ("top-level-true", "true", "expected a JSON object"),
    ("lone-brace", "{", "malformed JSON"),
    ("unterminated-string", '{"status":"0', "malformed JSON"),
    ("bad-escape", '{"status":"\\x41"}', "malformed JSON"),
    ("lone-surrogate-escape", '{"user_id":"\\ud800","status":0}', "malformed JSON"),
    ("raw-control-char", '{"status":0,"user_id":"a\x01b"}', "malformed JSON"),
    ("deep-nesting", '{"a":' * 5000 + "1" + "}" * 5000, "malformed JSON"),
    ("huge-exponent", '{"status":1e999}', "malformed JSON"),
]
UTF8_BAD = [
    ("utf8-invalid-byte", b'{"status":0,"user_id":"\xff"}', "invalid UTF-8"),
    ("utf8-overlong-slash", b'{"status":0,"user_id":"\xc0\xaf"}', "invalid UTF-8"),
    ("utf8-overlong-nul", b'{"status":0,"user_id":"\xc0\x80"}', "invalid UTF-8"),
    ("utf8-encoded-surrogate", b'{"status":0,"user_id":"\xed\xa0\x80"}', "invalid UTF-8"),
    ("utf8-truncated-sequence", b'{"status":0,"user_id":"\xe2\x82"}', "invalid UTF-8"),
    ("utf8-five-byte-sequence", b'{"status":0,"user_id":"\xf8\x88\x80\x80\x80"}', "invalid UTF-8"),
    ("utf8-above-10ffff", b'{"status":0,"user_id":"\xf4\x90\x80\x80"}', "invalid UTF-8"),
    ("utf8-latin1-text", b'{"status":0,"user_id":"Jos\xe9"}', "invalid UTF-8"),
    ("raw-nul-byte", b'{"status":0,"user_id":"a\x00b"}', "malformed JSON"),
]

# ---------------------------------------------------------------- receipts (verifyReceipt responses)
for name, text, reason in BAD_JSON:
    add("receipts", name, text, "quarantine", reason)
for name, data, reason in UTF8_BAD:
    add("receipts", name, data, "quarantine", reason)


def receipt(in_app, **extra):
    body = {"status": 0, "environment": "Production",
            "receipt": {"bundle_id": "com.example.coins", "in_app": in_app}}
    body.update(extra)
    return json.dumps(body, separators=(",", ":"))


ENTRY = {"quantity": "1", "product_id": "com.example.coins.pack6", "transaction_id": "7001",
         "purchase_date_ms": "1000"}


def entry(**changes):
    e = dict(ENTRY)
    for k, v in changes.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


add("receipts", "empty-object", "{}", "quarantine", "no \"status\"")
# Foundation's JSON parser accepts a trailing comma and a byte order mark before the object: lenient, harmless.
add("receipts", "trailing-comma-accepted", '{"status":21007,}', "ok:2", "")
add("receipts", "bom-before-object-accepted", b'\xef\xbb\xbf{"status":21007}', "ok:2", "")
add("receipts", "status-only-no-receipt", '{"status":21002}', "ok:2", "")
add("receipts", "status-missing-wrapped", '{"response":{"environment":"Production"}}', "quarantine",
    "response.status: missing")
add("receipts", "status-text", '{"status":"abc"}', "quarantine", "status: expected a whole number, found \"abc\"")
add("receipts", "status-boolean", '{"status":true}', "quarantine", "status: expected a whole number, found a boolean")
add("receipts", "status-fraction", '{"status":1.5}', "quarantine", "status: expected a whole number, found 1.5")
add("receipts", "status-object", '{"status":{}}', "quarantine", "status: expected a whole number, found an object")
add("receipts", "receipt-array", '{"status":0,"receipt":[]}', "quarantine", "receipt: expected an object, found an array")
add("receipts", "in-app-object", '{"status":0,"receipt":{"in_app":{}}}', "quarantine",
    "receipt.in_app: expected an array, found an object")
add("receipts", "in-app-entry-number", '{"status":0,"receipt":{"in_app":[1]}}', "quarantine",
    "receipt.in_app[0]: expected an object, found a number")
add("receipts", "transaction-id-missing", receipt([entry(transaction_id=None)]), "quarantine",
    "receipt.in_app[0].transaction_id: missing")
add("receipts", "transaction-id-empty", receipt([entry(transaction_id="")]), "quarantine",
    "receipt.in_app[0].transaction_id: missing")
add("receipts", "transaction-id-object", receipt([entry(transaction_id={"id": 1})]), "quarantine",
    "receipt.in_app[0].transaction_id: expected text, found an object")
add("receipts", "transaction-id-boolean", receipt([entry(transaction_id=True)]), "quarantine",
    "receipt.in_app[0].transaction_id: expected text, found a boolean")
add("receipts", "purchase-date-text", receipt([entry(purchase_date_ms="yesterday")]), "quarantine",
    "receipt.in_app[0].purchase_date_ms: expected a whole number, found \"yesterday\"")
add("receipts", "quantity-fraction-text", receipt([entry(quantity="1.5")]), "quarantine",
    "receipt.in_app[0].quantity: expected a whole number, found \"1.5\"")
add("receipts", "quantity-overflow-text", receipt([entry(quantity="99999999999999999999")]), "quarantine",
    "receipt.in_app[0].quantity: expected a whole number")
add("receipts", "quantity-overflow-number", receipt([entry(quantity=1e30)]), "quarantine",
    "receipt.in_app[0].quantity: expected a whole number")
add("receipts", "quantity-array", receipt([entry(quantity=[1])]), "quarantine",
    "receipt.in_app[0].quantity: expected a whole number, found an array")
add("receipts", "second-entry-bad", receipt([entry(), entry(transaction_id="7002", expires_date_ms="soon")]),
    "quarantine", "receipt.in_app[1].expires_date_ms: expected a whole number")
add("receipts", "latest-receipt-info-object", receipt([], latest_receipt_info={"a": 1}), "quarantine",
    "latest_receipt_info: expected an array, found an object")
add("receipts", "wrapped-response-text", '{"response":"ok","user_id":"u-1"}', "quarantine",
    "response: expected an object, found text")
add("receipts", "wrapped-received-at-bad", json.dumps({"response": json.loads(receipt([entry()])),
                                                          "received_at": "2026-13-45T99:00:00Z"}), "quarantine",
    "received_at: expected epoch milliseconds or an RFC 3339 time")
add("receipts", "wrapped-user-id-array", json.dumps({"response": json.loads(receipt([entry()])),
                                                        "user_id": ["u-1"]}), "quarantine",
    "user_id: expected text, found an array")
add("receipts", "bundle-id-number", '{"status":0,"receipt":{"bundle_id":5,"in_app":[{"transaction_id":"7003"}]}}',
    "quarantine", "receipt.bundle_id: expected text, found a number")
# A valid response (status 0 or 21006) without its receipt would leave no sighting: it must not vanish.
add("receipts", "receipt-missing", '{"status":0,"environment":"Production"}', "quarantine",
    "receipt: missing (a status 0 response carries the receipt)")
add("receipts", "receipt-null", '{"status":0,"receipt":null}', "quarantine", "receipt: missing")
add("receipts", "receipt-text", '{"status":0,"receipt":"MIIT"}', "quarantine", "receipt: expected an object, found text")
add("receipts", "receipt-missing-expired", '{"status":21006}', "quarantine", "receipt: missing")
add("receipts", "in-app-missing", '{"status":0,"receipt":{"bundle_id":"com.example.coins"}}', "quarantine",
    "receipt.in_app: missing")
add("receipts", "in-app-null", '{"status":0,"receipt":{"bundle_id":"com.example.coins","in_app":null}}',
    "quarantine", "receipt.in_app: missing")
add("receipts", "in-app-text", '{"status":0,"receipt":{"bundle_id":"com.example.coins","in_app":"[]"}}',
    "quarantine", "receipt.in_app: expected an array, found text")
add("receipts", "bundle-id-missing", '{"status":0,"receipt":{"in_app":[{"transaction_id":"7005"}]}}', "quarantine",
    "receipt.bundle_id: missing")
add("receipts", "bundle-id-null", '{"status":0,"receipt":{"bundle_id":null,"in_app":[]}}', "quarantine",
    "receipt.bundle_id: missing")
add("receipts", "in-app-empty-ok", '{"status":0,"receipt":{"bundle_id":"com.example.coins","in_app":[]}}', "ok:2", "")
add("receipts", "sandbox-status-without-receipt-ok", '{"status":21007,"environment":"Sandbox"}', "ok:2", "")
add("receipts", "escaped-nul-is-text", receipt([entry(transaction_id="7004")], note="a\\u0000b"), "ok:3", "")

# ---------------------------------------------------------------- signed transactions (compact JWS)
GOOD_TX = {"transactionId": "8001", "originalTransactionId": "8001", "bundleId": "com.example.coins",
           "productId": "com.example.coins.pack6", "type": "Consumable", "quantity": 1, "purchaseDate": 1700000000000,
           "environment": "Production", "signedDate": 1700000000000, "storefront": "USA", "currency": "USD",
           "price": 4990, "inAppOwnershipType": "PURCHASED"}
GARBAGE_X5C = [base64.b64encode(b"not a certificate " + bytes([i])).decode() for i in range(3)]
H = {"alg": "ES256", "x5c": GARBAGE_X5C}


def tx(**changes):
    p = dict(GOOD_TX)
    for k, v in changes.items():
        if v is None:
            p.pop(k, None)
        else:
            p[k] = v
    return p


S = "signed"
add(S, "one-part", b64u('{"alg":"ES256"}'), "quarantine", "bad-format: compact JWS needs 3 dot-separated parts, found 1")
add(S, "two-parts", b64u('{"alg":"ES256"}') + "." + b64u(json.dumps(GOOD_TX)), "quarantine",
    "compact JWS needs 3 dot-separated parts, found 2")
add(S, "four-parts", jwsof(H, GOOD_TX) + ".AAAA", "quarantine", "compact JWS needs 3 dot-separated parts, found 4")
add(S, "dots-only", "..", "quarantine", "compact JWS has an empty header or payload")
add(S, "empty-header", "." + b64u(json.dumps(GOOD_TX)) + ".AAAA", "quarantine", "empty header or payload")
add(S, "empty-payload", b64u(json.dumps(H)) + "..AAAA", "quarantine", "empty header or payload")
add(S, "header-not-base64url", "eyJ!!!." + b64u(json.dumps(GOOD_TX)) + ".AAAA", "quarantine",
    "JWS header is not base64url")
add(S, "payload-not-base64url", b64u(json.dumps(H)) + ".e30@#$.AAAA", "quarantine", "JWS payload is not base64url")
add(S, "signature-not-base64url", b64u(json.dumps(H)) + "." + b64u(json.dumps(GOOD_TX)) + ".%%%", "quarantine",
    "JWS signature is not base64url")
add(S, "payload-impossible-base64-length", b64u(json.dumps(H)) + ".e30xx.AAAA", "quarantine",
    "JWS payload is not base64url")
add(S, "header-not-json", jwsof("alg=ES256", GOOD_TX), "quarantine", "JWS header is not a JSON object")
add(S, "header-json-array", jwsof("[1,2]", GOOD_TX), "quarantine", "JWS header is not a JSON object")
add(S, "header-invalid-utf8", jwsof(b'{"alg":"\xff"}', GOOD_TX), "quarantine", "JWS header is not a JSON object")
add(S, "payload-not-json", jwsof(H, "transactionId=1"), "quarantine", "JWS payload is not a JSON object")
add(S, "payload-json-string", jwsof(H, '"8001"'), "quarantine", "JWS payload is not a JSON object")
add(S, "x5c-not-array", jwsof({"alg": "ES256", "x5c": "MIIB"}, GOOD_TX), "quarantine", "JWS header x5c is not an array")
add(S, "x5c-numbers", jwsof({"alg": "ES256", "x5c": [1, 2, 3]}, GOOD_TX), "quarantine",
    "JWS header x5c[0] is not base64 DER")
add(S, "x5c-bad-base64", jwsof({"alg": "ES256", "x5c": ["MIIB", "@@@@", "MIIB"]}, GOOD_TX), "quarantine",
    "JWS header x5c[1] is not base64 DER")
add(S, "x5c-base64url-alphabet", jwsof({"alg": "ES256", "x5c": ["-_-_", "AAAA", "AAAA"]}, GOOD_TX), "quarantine",
    "JWS header x5c[0] is not base64 DER")
add(S, "x5c-garbage-der", jwsof(H, tx(transactionId="8101")), "failed", "bad-chain: x5c[0] (leaf) is not a DER certificate")
add(S, "x5c-two-entries", jwsof({"alg": "ES256", "x5c": GARBAGE_X5C[:2]}, tx(transactionId="8102")), "failed",
    "bad-chain: x5c has 2 certificates, expected 3")
add(S, "x5c-missing", jwsof({"alg": "ES256"}, tx(transactionId="8103")), "failed", "bad-chain: x5c has 0 certificates")
add(S, "x5c-pem-text", jwsof({"alg": "ES256", "x5c": ["-----BEGIN CERTIFICATE-----"] * 3}, tx(transactionId="8104")),
    "quarantine", "JWS header x5c[0] is not base64 DER")
add(S, "alg-none", jwsof({"alg": "none", "x5c": GARBAGE_X5C}, tx(transactionId="8105"), b""), "failed",
    "bad-alg: header alg is 'none'")
add(S, "alg-hs256", jwsof({"alg": "HS256", "x5c": GARBAGE_X5C}, tx(transactionId="8106")), "failed",
    "bad-alg: header alg is 'HS256'")
add(S, "alg-missing", jwsof({"x5c": GARBAGE_X5C}, tx(transactionId="8107")), "failed", "bad-alg: header has no alg")
add(S, "alg-number", jwsof({"alg": 256, "x5c": GARBAGE_X5C}, tx(transactionId="8108")), "failed", "bad-alg")
add(S, "payload-no-transaction-id", jwsof(H, tx(transactionId=None)), "quarantine", "transactionId: missing")
add(S, "payload-transaction-id-object", jwsof(H, tx(transactionId={"a": 1})), "quarantine",
    "transactionId: expected text, found an object")
add(S, "payload-price-text", jwsof(H, tx(price="4.99")), "quarantine", "price: expected a whole number, found \"4.99\"")
add(S, "payload-purchase-date-boolean", jwsof(H, tx(purchaseDate=False)), "quarantine",
    "purchaseDate: expected a whole number, found a boolean")
add(S, "payload-quantity-fraction", jwsof(H, tx(quantity=1.25)), "quarantine",
    "quantity: expected a whole number, found 1.25")
add(S, "payload-invalid-utf8", jwsof(H, b'{"transactionId":"\xc0\xaf"}'), "quarantine",
    "JWS payload is not a JSON object")
add(S, "huge-header", jwsof({"alg": "ES256", "x5c": GARBAGE_X5C, "pad": "A" * 100000}, tx(transactionId="8109")),
    "failed", "bad-chain")
add(S, "wrapped-without-info", '{"user_id":"u-1"}', "quarantine", "no signedTransactionInfo in the object")
add(S, "wrapped-info-number", '{"signedTransactionInfo":42}', "quarantine", "signedTransactionInfo: expected text, found a number")
add(S, "wrapped-info-object", '{"signedTransactionInfo":{"a":1}}', "quarantine",
    "signedTransactionInfo: expected text, found an object")
add(S, "wrapped-malformed-json", '{"signedTransactionInfo":"a.b.c"', "quarantine", "malformed JSON")
add(S, "wrapped-received-at-bad",
    json.dumps({"signedTransactionInfo": jwsof(H, tx(transactionId="8110")), "received_at": "noon"}), "quarantine",
    "received_at: expected epoch milliseconds or an RFC 3339 time")
add(S, "space-inside", jwsof(H, GOOD_TX).replace(".", ". ", 1), "quarantine", "JWS payload is not base64url")
add(S, "not-jws-text", "hello world", "quarantine", "compact JWS needs 3 dot-separated parts, found 1")
for name, data, reason in UTF8_BAD[:7]:
    add(S, name, data, "quarantine", "invalid UTF-8")

# Parser differentials: a key given twice means two things to two parsers; Apple never signs one.
GOOD_TX_TEXT = json.dumps(tx(transactionId="8201"), separators=(",", ":"))
add(S, "payload-duplicate-transaction-id", jwsof(H, GOOD_TX_TEXT[:-1] + ',"transactionId":"8202"}'), "quarantine",
    'bad-format: JWS payload has a duplicate key "transactionId"')
add(S, "payload-duplicate-key-escaped", jwsof(H, GOOD_TX_TEXT[:-1] + ',"transaction\\u0049d":"8203"}'), "quarantine",
    'JWS payload has a duplicate key "transactionId"')
add(S, "payload-duplicate-nested-key", jwsof(H, GOOD_TX_TEXT[:-1] + ',"extra":{"a":1,"a":2}}'), "quarantine",
    'JWS payload has a duplicate key "a"')
H_TEXT = json.dumps(H, separators=(",", ":"))
add(S, "header-duplicate-alg", jwsof('{"alg":"none",' + H_TEXT[1:], tx(transactionId="8204")), "quarantine",
    'bad-format: JWS header has a duplicate key "alg"')
add(S, "header-duplicate-x5c", jwsof(H_TEXT[:-1] + ',"x5c":[]}', tx(transactionId="8205")), "quarantine",
    'JWS header has a duplicate key "x5c"')
add(S, "header-crit-unknown", jwsof(dict(H, crit=["exp"], exp=1), tx(transactionId="8206")), "quarantine",
    "bad-format: JWS header has a crit parameter (exp)")
add(S, "header-crit-empty", jwsof(dict(H, crit=[]), tx(transactionId="8207")), "quarantine",
    "JWS header has a crit parameter")
add(S, "wrapped-duplicate-info", '{"signedTransactionInfo":"a.b.c","signedTransactionInfo":"' +
    jwsof(H, tx(transactionId="8208")) + '"}', "quarantine", 'duplicate key "signedTransactionInfo"')
# Apple's schema is fixed: a field of the wrong JSON type is not Apple's, however well signed.
add(S, "schema-transaction-id-number", jwsof(H, tx(transactionId=8209)), "quarantine",
    "schema: transactionId: expected text, found a number")
add(S, "schema-original-transaction-id-number", jwsof(H, tx(transactionId="8210", originalTransactionId=8210)),
    "quarantine", "schema: originalTransactionId: expected text, found a number")
add(S, "schema-purchase-date-text", jwsof(H, tx(transactionId="8211", purchaseDate="1700000000000")), "quarantine",
    'schema: purchaseDate: expected a whole number, found "1700000000000"')
add(S, "schema-quantity-text", jwsof(H, tx(transactionId="8212", quantity="1")), "quarantine",
    'schema: quantity: expected a whole number, found "1"')
add(S, "schema-price-text", jwsof(H, tx(transactionId="8213", price="4990")), "quarantine",
    'schema: price: expected a whole number, found "4990"')
add(S, "schema-type-number", jwsof(H, tx(transactionId="8214", type=1)), "quarantine",
    "schema: type: expected text, found a number")
add(S, "schema-storefront-number", jwsof(H, tx(transactionId="8215", storefront=840)), "quarantine",
    "schema: storefront: expected text, found a number")
add(S, "schema-app-account-token-number", jwsof(H, tx(transactionId="8216", appAccountToken=12345)), "quarantine",
    "schema: appAccountToken: expected text, found a number")
add(S, "schema-product-id-missing", jwsof(H, tx(transactionId="8217", productId=None)), "quarantine",
    "schema: productId: missing")
add(S, "schema-purchase-date-missing", jwsof(H, tx(transactionId="8218", purchaseDate=None)), "quarantine",
    "schema: purchaseDate: missing")
add(S, "schema-transaction-id-null", jwsof(H, tx(transactionId=None) | {"transactionId": None}), "quarantine",
    "schema: transactionId: missing")
# Optional fields stay optional, and a $0 offer is a real Apple price.
add(S, "schema-optional-fields-absent-ok", jwsof(H, tx(transactionId="8219", price=None, currency=None,
                                                      storefront=None, type=None, originalTransactionId=None)),
    "failed", "bad-chain")
add(S, "schema-zero-price-offer-ok", jwsof(H, tx(transactionId="8220", price=0, offerType=1)), "failed", "bad-chain")
add(S, "schema-is-upgraded-text", jwsof(H, tx(transactionId="8221", isUpgraded="true")), "quarantine",
    'schema: isUpgraded: expected true or false, found text')
add(S, "schema-is-upgraded-ok", jwsof(H, tx(transactionId="8222", isUpgraded=True, revocationDate=1767225600000)),
    "failed", "bad-chain")

# ---------------------------------------------------------------- notifications (ASN V2)
N = "notifications"
NOTE = {"notificationType": "REFUND", "notificationUUID": "9a1b2c3d-0000-4000-8000-000000000001",
        "signedDate": 1700000000000,
        "data": {"bundleId": "com.example.coins", "appAppleId": 1234567, "environment": "Production",
                 "signedTransactionInfo": jwsof(H, tx(transactionId="9001"))}}


def note(**changes):
    n = json.loads(json.dumps(NOTE))
    for k, v in changes.items():
        if k.startswith("data_"):
            key = k[5:]
            if v is None:
                n["data"].pop(key, None)
            else:
                n["data"][key] = v
        elif v is None:
            n.pop(k, None)
        else:
            n[k] = v
    return n


def signed_payload(payload, header=H):
    return json.dumps({"signedPayload": jwsof(header, payload)})


for name, text, reason in BAD_JSON[:12]:
    add(N, name, text, "quarantine", reason)
for name, data, reason in UTF8_BAD[:5]:
    add(N, name, data, "quarantine", reason)
add(N, "no-signed-payload", '{"payload":"x"}', "quarantine", "no signedPayload in the object")
add(N, "signed-payload-number", '{"signedPayload":12}', "quarantine", "signedPayload: expected text, found a number")
add(N, "signed-payload-array", '{"signedPayload":["a"]}', "quarantine", "signedPayload: expected text, found an array")
add(N, "signed-payload-not-jws", '{"signedPayload":"abc"}', "quarantine", "bad-format: compact JWS needs 3")
add(N, "signed-payload-bad-header", '{"signedPayload":"e30x.e30.AAAA"}', "quarantine", "JWS header is not a JSON object")
add(N, "signed-payload-bad-base64", '{"signedPayload":"e30?.e30.AAAA"}', "quarantine", "JWS header is not base64url")
add(N, "payload-no-uuid", signed_payload(note(notificationUUID=None)), "quarantine", "notificationUUID: missing")
add(N, "payload-uuid-number", signed_payload(note(notificationUUID=[1])), "quarantine",
    "notificationUUID: expected text, found an array")
add(N, "payload-data-array", signed_payload(note(data=[1])), "quarantine", "data: expected an object, found an array")
add(N, "payload-signed-date-text", signed_payload(note(signedDate="today")), "quarantine",
    "signedDate: expected a whole number, found \"today\"")
add(N, "app-apple-id-text", signed_payload(note(data_appAppleId="one")), "quarantine",
    "data.appAppleId: expected a whole number, found \"one\"")
add(N, "nested-transaction-not-jws", signed_payload(note(data_signedTransactionInfo="x.y")), "quarantine",
    "data.signedTransactionInfo: bad-format: compact JWS needs 3 dot-separated parts, found 2")
add(N, "nested-transaction-no-id", signed_payload(note(data_signedTransactionInfo=jwsof(H, tx(transactionId=None)))),
    "quarantine", "transactionId: missing")
add(N, "nested-transaction-price-text",
    signed_payload(note(data_signedTransactionInfo=jwsof(H, tx(transactionId="9002", price="free")))), "quarantine",
    "price: expected a whole number, found \"free\"")
add(N, "nested-renewal-garbage", signed_payload(note(data_signedRenewalInfo="not-a-jws")), "quarantine",
    "data.signedRenewalInfo: bad-format")
add(N, "nested-renewal-status-text",
    signed_payload(note(data_signedRenewalInfo=jwsof(H, {"autoRenewStatus": "on", "originalTransactionId": "9"}))),
    "quarantine", "autoRenewStatus: expected a whole number, found \"on\"")
add(N, "received-at-bad", json.dumps({"signedPayload": jwsof(H, note()), "received_at": "2026-02-30T25:00:00Z"}),
    "quarantine", "received_at: expected epoch milliseconds or an RFC 3339 time")
add(N, "alg-none", signed_payload(note(notificationUUID="9a1b2c3d-0000-4000-8000-000000000002"),
                                  {"alg": "none", "x5c": GARBAGE_X5C}), "failed", "bad-alg")
add(N, "garbage-x5c", signed_payload(note(notificationUUID="9a1b2c3d-0000-4000-8000-000000000003")), "failed",
    "bad-chain")
NOTE_TEXT = json.dumps(note(notificationUUID="9a1b2c3d-0000-4000-8000-000000000004"), separators=(",", ":"))
add(N, "payload-duplicate-type", json.dumps({"signedPayload": jwsof(H, NOTE_TEXT[:-1] + ',"notificationType":"TEST"}')}),
    "quarantine", 'bad-format: JWS payload has a duplicate key "notificationType"')
add(N, "payload-duplicate-in-data",
    json.dumps({"signedPayload": jwsof(H, NOTE_TEXT.replace('"data":{', '"data":{"bundleId":"com.other",', 1))}),
    "quarantine", 'JWS payload has a duplicate key "bundleId"')
add(N, "nested-transaction-duplicate-key",
    signed_payload(note(notificationUUID="9a1b2c3d-0000-4000-8000-000000000005",
                        data_signedTransactionInfo=jwsof(H, GOOD_TX_TEXT[:-1] + ',"price":0}'))),
    "quarantine", 'data.signedTransactionInfo: bad-format: JWS payload has a duplicate key "price"')
add(N, "nested-transaction-schema",
    signed_payload(note(notificationUUID="9a1b2c3d-0000-4000-8000-000000000006",
                        data_signedTransactionInfo=jwsof(H, tx(transactionId=9003)))),
    "quarantine", "schema: transactionId: expected text, found a number")
add(N, "header-crit", signed_payload(note(notificationUUID="9a1b2c3d-0000-4000-8000-000000000007"),
                                     dict(H, crit=["b64"], b64=False)), "quarantine", "JWS header has a crit parameter")
add(N, "wrapper-duplicate-signed-payload",
    '{"signedPayload":"a.b.c","signedPayload":' + json.dumps(jwsof(H, note())) + "}", "quarantine",
    'duplicate key "signedPayload"')

# ---------------------------------------------------------------- credits (JSON Lines)
C = "credits"
for name, text, reason in BAD_JSON[:8]:
    add(C, name, text.replace("status", "credit_id"), "quarantine", reason)
for name, data, reason in UTF8_BAD:
    add(C, name, data.replace(b"status", b"credit_id").replace(b'"credit_id":0', b'"credit_id":"c-bad"'),
        "quarantine", reason)


def credit(**fields):
    c = {"credit_id": "c-bad", "transaction_id": "1", "user_id": "u-1", "units": 100, "credited_at": 1000}
    for k, v in fields.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return json.dumps(c)


add(C, "credit-id-missing", credit(credit_id=None), "quarantine", "credit_id: missing")
add(C, "credit-id-empty", credit(credit_id=""), "quarantine", "credit_id: missing")
add(C, "credit-id-object", credit(credit_id={"id": 1}), "quarantine", "credit_id: expected text, found an object")
add(C, "units-text", credit(units="many"), "quarantine", "units: expected a whole number, found \"many\"")
add(C, "units-fraction", credit(units=2.5), "quarantine", "units: expected a whole number, found \"2.5\"")
add(C, "units-boolean", credit(units=True), "quarantine", "units: expected text, found a boolean")
add(C, "units-overflow", credit(units="123456789012345678901234"), "quarantine", "units: expected a whole number")
add(C, "units-array", credit(units=[1]), "quarantine", "units: expected text, found an array")
add(C, "credited-at-text", credit(credited_at="last week"), "quarantine",
    "credited_at: expected epoch milliseconds or an RFC 3339 time, found \"last week\"")
add(C, "credited-at-month-13", credit(credited_at="2026-13-01T00:00:00Z"), "quarantine", "credited_at: expected")
add(C, "credited-at-february-30", credit(credited_at="2026-02-30"), "quarantine", "credited_at: expected")
add(C, "credited-at-april-31", credit(credited_at="2026-04-31T10:00:00Z"), "quarantine", "credited_at: expected")
add(C, "credited-at-hour-24", credit(credited_at="2026-01-01T24:00:00Z"), "quarantine", "credited_at: expected")
add(C, "credited-at-no-zone", credit(credited_at="2026-01-01T10:00:00"), "quarantine", "credited_at: expected")
add(C, "credited-at-bad-offset", credit(credited_at="2026-01-01T10:00:00+5"), "quarantine", "credited_at: expected")
add(C, "credited-at-overflow-digits", credit(credited_at="99999999999999999999999"), "quarantine",
    "credited_at: expected")
add(C, "credit-id-nul-escape", credit(credit_id="c\u0000x"), "quarantine", "credit_id: contains a NUL character")
add(C, "user-id-nul-escape", credit(user_id="u\u00001"), "quarantine", "user_id: contains a NUL character")
add(C, "reversed-at-object", credit(reversed_at={"t": 1}), "quarantine", "reversed_at: expected text, found an object")
add(C, "user-id-array", credit(user_id=["u-1", "u-2"]), "quarantine", "user_id: expected text, found an array")
add(C, "fraction-of-seconds-ok", credit(credit_id="c-frac", credited_at="2026-01-01T10:00:00.123456Z"), "ok:3", "")
add(C, "units-zero", credit(units=0), "quarantine", "units: 0 grants nothing")
# A negative entry is a clawback (kept apart from the credits, so the view still holds the two good ones).
add(C, "units-negative-clawback-ok", credit(units="-5"), "ok:2", "")
add(C, "units-negative-without-reference", credit(units=-5, transaction_id=None), "quarantine",
    "units: -5 is a clawback without transaction_id or order_id")
add(C, "units-missing", credit(units=None), "quarantine", "units: missing (a credit grants units)")
add(C, "user-id-missing", credit(user_id=None), "quarantine", "user_id: missing (a credit needs the account")
add(C, "user-id-blank", credit(user_id="  "), "quarantine", "user_id: missing")
add(C, "credited-at-missing", credit(credited_at=None), "quarantine", "credited_at: missing")
add(C, "transaction-id-spreadsheet", credit(transaction_id="2.000001E+15"), "quarantine",
    'transaction_id: "2.000001E+15" is a number as a spreadsheet shows it')
add(C, "transaction-id-decimal", credit(transaction_id="2000000512345678.0"), "quarantine",
    "transaction_id: \"2000000512345678.0\" is a number as a spreadsheet shows it")
add(C, "transaction-id-number-beyond-2-53", credit(transaction_id=9007199254740993), "quarantine",
    "transaction_id: the JSON number 9007199254740993 is beyond 2^53")
add(C, "user-id-number-beyond-2-53", credit(user_id=12345678901234567890), "quarantine",
    "user_id: the JSON number 12345678901234567890 is beyond 2^53")
add(C, "transaction-id-forged-text-ok", credit(credit_id="c-forged", transaction_id="com.urus.iap.1"), "ok:3", "")
add(C, "transaction-id-small-number-ok", credit(credit_id="c-num", transaction_id=2000000512345), "ok:3", "")
add(C, "sandbox-transaction-id-ok", credit(credit_id="c-sb", transaction_id="2000000000000001"), "ok:3", "")

# ---------------------------------------------------------------- orders (JSON Lines)
O = "orders-jsonl"


def order(**fields):
    o = {"order_id": "o-bad", "user_id": "u-1", "product_id": "com.example.coins.pack6", "price": "4.99",
         "currency": "USD", "created_at": "2026-01-01T00:00:00Z", "transaction_id": "1"}
    for k, v in fields.items():
        if v is None:
            o.pop(k, None)
        else:
            o[k] = v
    return json.dumps(o)


add(O, "order-id-missing", order(order_id=None), "quarantine", "order_id: missing")
add(O, "price-text", order(price="cheap"), "quarantine", "price: expected a decimal like 0.99, found \"cheap\"")
add(O, "price-two-dots", order(price="1.2.3"), "quarantine", "price: expected a decimal like 0.99")
add(O, "price-exponent", order(price="1e3"), "quarantine", "price: expected a decimal like 0.99")
add(O, "price-milli-text", order(price_milli="4990x"), "quarantine", "price_milli: expected a whole number")
add(O, "quantity-text", order(quantity="two"), "quarantine", "quantity: expected a whole number, found \"two\"")
add(O, "created-at-bad", order(created_at="01/02/2026"), "quarantine", "created_at: expected epoch milliseconds")
add(O, "price-boolean", order(price=False), "quarantine", "price: expected text, found a boolean")
add(O, "status-object", order(status={"s": 1}), "quarantine", "status: expected text, found an object")
add(O, "number-price-ok", order(order_id="o-num", price=4.99), "ok:3", "")
add(O, "price-zero-free-offer-ok", order(order_id="o-free", price="0.00"), "ok:3", "")
add(O, "price-negative", order(price="-4.99"), "quarantine", "price: -4.99 is negative (a price is 0 or more")
add(O, "price-milli-zero-free-offer-ok", order(order_id="o-free", price_milli=0), "ok:3", "")
add(O, "price-milli-negative", order(price_milli=-990), "quarantine", "price_milli: -990 is negative")
add(O, "quantity-zero", order(quantity=0), "quarantine", "quantity: 0 is not a positive number")
add(O, "quantity-negative", order(quantity=-1), "quarantine", "quantity: -1 is not a positive number")
add(O, "created-at-missing", order(created_at=None), "quarantine", "created_at: missing (an order has a creation time)")
add(O, "transaction-id-spreadsheet", order(transaction_id="2.000001E+15"), "quarantine",
    "transaction_id: \"2.000001E+15\" is a number as a spreadsheet shows it")
add(O, "order-id-number-beyond-2-53", order(order_id=90071992547409931), "quarantine",
    "order_id: the JSON number 90071992547409931 is beyond 2^53")
add(O, "order-id-fraction-number", order(order_id=1.5), "quarantine", "order_id: the JSON number 1.5 is not an id")
add(O, "optional-fields-absent-ok", json.dumps({"order_id": "o-min", "created_at": 1767225600000}), "ok:3", "")

# ---------------------------------------------------------------- orders (CSV rows between good rows)
R = "orders-csv"
add(R, "too-few-fields", "o-bad,u-1", "quarantine", "expected 6 fields as in the header, found 2")
add(R, "too-many-fields", "o-bad,u-1,com.example.coins.pack6,4.99,USD,2026-01-01,extra", "quarantine",
    "expected 6 fields as in the header, found 7")
add(R, "quote-inside-unquoted", 'o-bad,u"1,com.example.coins.pack6,4.99,USD,2026-01-01', "quarantine",
    "a quote inside an unquoted field 2")
add(R, "text-after-closing-quote", 'o-bad,"u-1"x,com.example.coins.pack6,4.99,USD,2026-01-01', "quarantine",
    "text after a closing quote in field 2")
add(R, "unterminated-quote", 'o-bad,"u-1,com.example.coins.pack6,4.99,USD,2026-01-01', "quarantine",
    "unterminated quoted field")
add(R, "price-text", "o-bad,u-1,com.example.coins.pack6,free,USD,2026-01-01", "quarantine",
    "price: expected a decimal like 0.99, found \"free\"")
add(R, "price-decimal-comma", 'o-bad,u-1,com.example.coins.pack6,"4,99",USD,2026-01-01', "quarantine",
    "price: expected a decimal like 0.99, found \"4,99\"")
add(R, "price-currency-symbol", "o-bad,u-1,com.example.coins.pack6,$4.99,USD,2026-01-01", "quarantine",
    "price: expected a decimal like 0.99")
add(R, "price-too-many-decimals", "o-bad,u-1,com.example.coins.pack6,4.99999,USD,2026-01-01", "quarantine",
    "price: expected a decimal like 0.99")
add(R, "price-just-above-int64", "o-bad,u-1,com.example.coins.pack6,9223372036854775.808,USD,2026-01-01",
    "quarantine", "price: expected a decimal like 0.99")
add(R, "price-huge", "o-bad,u-1,com.example.coins.pack6,99999999999999999999.99,USD,2026-01-01", "quarantine",
    "price: expected a decimal like 0.99")
add(R, "created-at-text", "o-bad,u-1,com.example.coins.pack6,4.99,USD,tomorrow", "quarantine",
    "created_at: expected epoch milliseconds or an RFC 3339 time, found \"tomorrow\"")
add(R, "created-at-us-date", "o-bad,u-1,com.example.coins.pack6,4.99,USD,01/31/2026", "quarantine",
    "created_at: expected epoch milliseconds")
add(R, "created-at-february-29-non-leap", "o-bad,u-1,com.example.coins.pack6,4.99,USD,2026-02-29", "quarantine",
    "created_at: expected epoch milliseconds")
add(R, "created-at-minute-60", "o-bad,u-1,com.example.coins.pack6,4.99,USD,2026-01-01T10:60:00Z", "quarantine",
    "created_at: expected epoch milliseconds")
add(R, "created-at-trailing-text", "o-bad,u-1,com.example.coins.pack6,4.99,USD,2026-01-01Tomorrow", "quarantine",
    "created_at: expected epoch milliseconds")
add(R, "order-id-empty", ",u-1,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine", "order_id: missing")
add(R, "order-id-blank", "   ,u-1,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine", "order_id: missing")
add(R, "invalid-utf8", b"o-bad,u-\xff,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine",
    "invalid UTF-8 in field 2")
add(R, "overlong-utf8", b"o-bad,u-\xc0\xae,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine",
    "invalid UTF-8 in field 2")
add(R, "nul-byte", b"o-bad,u-\x001,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine",
    "NUL byte in field 2")
add(R, "only-commas", ",,,,,", "quarantine", "order_id: missing")
# Line breaks inside quotes are data (not in an id: an id with one is refused, see bom-mid-file).
add(R, "quoted-newline-ok", 'o-nl,u-1,"com.example.coins\n.pack6",4.99,USD,2026-01-01', "ok:3", "")
add(R, "escaped-quotes-ok", 'o-q,"u ""one""",com.example.coins.pack6,4.99,USD,2026-01-01', "ok:3", "")
# A BOM at the start of a line mid-file (concatenated exports) would become part of the order id.
add(R, "bom-mid-file", b"\xef\xbb\xbfo-bom,u-1,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine",
    "order_id: contains the invisible character U+FEFF (byte order mark) at character 1")
add(R, "price-zero-free-offer-ok", "o-free,u-1,com.example.coins.pack6,0,USD,2026-01-01", "ok:3", "")
add(R, "price-negative", "o-bad,u-1,com.example.coins.pack6,-0.99,USD,2026-01-01", "quarantine",
    "price: -0.99 is negative (a price is 0 or more; 0 for a free offer)")
add(R, "created-at-empty", "o-bad,u-1,com.example.coins.pack6,4.99,USD,", "quarantine", "created_at: missing")
add(R, "user-id-spreadsheet", "o-bad,2.00001E+11,com.example.coins.pack6,4.99,USD,2026-01-01", "quarantine",
    "user_id: \"2.00001E+11\" is a number as a spreadsheet shows it")
add(R, "quoted-cr-lf-ok", 'o-crlf,u-1,"com.example.coins\r\n.pack6",4.99,USD,2026-01-01', "ok:3", "")

CC = "credits-csv"
add(CC, "units-text", "c-bad,1,u-1,lots,2026-01-01", "quarantine", "units: expected a whole number, found \"lots\"")
add(CC, "units-fraction", "c-bad,1,u-1,1.5,2026-01-01", "quarantine", "units: expected a whole number, found \"1.5\"")
add(CC, "credited-at-bad", "c-bad,1,u-1,5,2026-1-1", "quarantine", "credited_at: expected epoch milliseconds")
add(CC, "credit-id-missing", ",1,u-1,5,2026-01-01", "quarantine", "credit_id: missing")
add(CC, "too-few-fields", "c-bad", "quarantine", "expected 5 fields as in the header, found 1")
add(CC, "unterminated-quote", '"c-bad,1,u-1,5,2026-01-01', "quarantine", "unterminated quoted field")
add(CC, "units-zero", "c-bad,1,u-1,0,2026-01-01", "quarantine", "units: 0 grants nothing")
add(CC, "units-negative-without-reference", "c-bad,,u-1,-5,2026-01-01", "quarantine",
    "units: -5 is a clawback without transaction_id or order_id")
add(CC, "transaction-id-spreadsheet", "c-bad,2.000001E+15,u-1,5,2026-01-01", "quarantine",
    "transaction_id: \"2.000001E+15\" is a number as a spreadsheet shows it")
add(CC, "user-id-empty", "c-bad,1,,5,2026-01-01", "quarantine", "user_id: missing")
add(CC, "credited-at-empty", "c-bad,1,u-1,5,", "quarantine", "credited_at: missing")

# ---------------------------------------------------------------- orders CSV whole files
F = "orders-csv-file"
HEADER = "order_id,user_id,product_id,price,currency,created_at"
ROW1 = "o-1,u-1,com.example.coins.pack6,4.99,USD,2026-01-01T00:00:00Z"
ROW2 = "o-2,u-2,com.example.coins.pack6,4.99,USD,2026-01-02"
add(F, "bom-header", "\ufeff" + HEADER + "\n" + ROW1 + "\n" + ROW2 + "\n", "ok:2", "")
add(F, "cr-only-line-ends", HEADER + "\r" + ROW1 + "\r" + ROW2 + "\r", "ok:2", "")
add(F, "crlf-line-ends", HEADER + "\r\n" + ROW1 + "\r\n" + ROW2 + "\r\n", "ok:2", "")
add(F, "mixed-line-ends", HEADER + "\r\n" + ROW1 + "\n" + ROW2 + "\r", "ok:2", "")
add(F, "no-final-newline", HEADER + "\n" + ROW1 + "\n" + ROW2, "ok:2", "")
add(F, "blank-lines", HEADER + "\n\n" + ROW1 + "\n\n\n" + ROW2 + "\n\n", "ok:2", "")
add(F, "uppercase-header", HEADER.upper() + "\n" + ROW1 + "\n" + ROW2 + "\n", "ok:2", "")
add(F, "empty-file", "", "ok:0", "")
add(F, "header-only", HEADER + "\n", "ok:0", "")
add(F, "header-without-order-id", "user_id,price\nu-1,4.99\n", "source-error", "the header has no order_id column")
add(F, "binary-garbage", bytes(range(256)) * 4, "source-error", "the header row cannot be read: NUL byte")
add(F, "unterminated-quote-then-good-rows",
    HEADER + "\n" + 'o-bad,"u-1,com.example.coins.pack6,4.99,USD,2026-01-01\n' + ROW1 + "\n" + ROW2 + "\n",
    "quarantine@2", "unterminated quoted field")
# Two stray quotes: in RFC 4180 terms the second closes the first, swallowing the good row between them.
add(F, "stray-quotes-around-a-good-row",
    HEADER + "\n" + 'o-bad,"u-1,com.example.coins.pack6,4.99,USD,2026-01-01\n' + ROW1 + "\n"
    + 'o-bad2,"u-2,com.example.coins.pack6,4.99,USD,2026-01-01\n' + ROW2 + "\n",
    "quarantine@2", "text after a closing quote in field 2 (a quoted field runs over a line end; reading on from line 3)")
add(F, "stray-quote-at-end", HEADER + "\n" + ROW1 + "\n" + ROW2 + "\n\"", "quarantine@4", "unterminated quoted field")
# Compressed exports: named as such, not read as lines of binary.
add(F, "gzip-file", gzip.compress((HEADER + "\n" + ROW1 + "\n").encode(), mtime=0), "source-error",
    "input.csv: the file is gzip-compressed")
add(F, "xz-file", lzma.compress((HEADER + "\n" + ROW1 + "\n").encode()), "source-error", "the file is xz-compressed")
add(F, "bzip2-file", bz2.compress((HEADER + "\n" + ROW1 + "\n").encode()), "source-error",
    "the file is bzip2-compressed")


def zipped(name, text):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), text)
    return buffer.getvalue()


add(F, "zip-file", zipped("orders.csv", HEADER + "\n" + ROW1 + "\n"), "source-error", "the file is zip-compressed")
add(F, "header-starting-bzh-ok", "BZh_note," + HEADER + "\nx," + ROW1 + "\n", "ok:1", "")
add(F, "utf16-file", (HEADER + "\n" + ROW1 + "\n").encode("utf-16"), "source-error", "is UTF-16")
add(F, "utf16-big-endian-file", (HEADER + "\n").encode("utf-16-be").join([b"\xfe\xff", b""]), "source-error",
    "is UTF-16")
add(F, "header-invalid-utf8", b"order_id,us\xffer\n" + ROW1.encode() + b"\n", "source-error",
    "input.csv:1: the header row cannot be read: invalid UTF-8 in field 2")
add(F, "header-unterminated-quote", '"order_id,user_id\n' + ROW1 + "\n", "source-error",
    "the header row cannot be read: unterminated quoted field")
add(F, "duplicate-order-rows", HEADER + "\n" + ROW1 + "\n" + ROW1 + "\n" + ROW2 + "\n", "ok:2", "")
add(F, "duplicate-header-name", "order_id,user_id,order_id,price,currency,created_at\n" + ROW1 + "\n", "source-error",
    "input.csv:1: the header names order_id twice (columns 1 and 3)")
add(F, "duplicate-header-name-case", "order_id,USER_ID,user_id,price,currency,created_at\n" + ROW1 + "\n",
    "source-error", "the header names user_id twice (columns 2 and 3)")
add(F, "lone-cr-in-unquoted-field", HEADER + "\n" + ROW1 + "\n" + "o-3,u-3,com.example.coins.pack6,4.99,USD,2026-01-0\r3" +
    "\n" + ROW2 + "\n", "source-error", "input.csv:3: a lone carriage return (CR) outside quotes")
add(F, "trailing-cr-at-end-ok", HEADER + "\n" + ROW1 + "\n" + ROW2 + "\r", "ok:2", "")

# ---------------------------------------------------------------- FX rate files
X = "fx"
add(X, "wrong-header", "day,code,rate\n2026-01-01,USD,1.1\n", "fx-error", ":1: expected the header date,currency,per_eur")
# One bad row is quarantined; the good rows are kept and the report names what lacks a rate.
add(X, "bad-date", "date,currency,per_eur\n2026-01-01,USD,1.1\n01.02.2026,USD,1.1\n", "fx-bad-row",
    ":3: date: expected YYYY-MM-DD, found \"01.02.2026\"")
add(X, "rate-text", "date,currency,per_eur\n2026-01-01,USD,one\n2026-01-01,GBP,0.8\n", "fx-bad-row",
    ":2: per_eur: expected a positive rate, found \"one\"")
add(X, "rate-zero", "date,currency,per_eur\n2026-01-01,USD,0\n", "fx-bad-row", ":2: per_eur: expected a positive rate, found \"0\"")
add(X, "rate-negative", "date,currency,per_eur\n2026-01-01,USD,-1.1\n", "fx-bad-row", ":2: per_eur: expected a positive rate, found \"-1.1\"")
add(X, "rate-infinite", "date,currency,per_eur\n2026-01-01,USD,inf\n", "fx-bad-row", ":2: per_eur: expected a positive rate, found \"inf\"")
add(X, "rate-nan", "date,currency,per_eur\n2026-01-01,USD,nan\n", "fx-bad-row", ":2: per_eur: expected a positive rate, found \"nan\"")
add(X, "rate-tiny", "date,currency,per_eur\n2026-01-01,USD,1e-300\n", "fx-bad-row",
    ":2: per_eur: \"1e-300\" is outside any currency's plausible rate")
add(X, "rate-huge", "date,currency,per_eur\n2026-01-01,USD,1e300\n", "fx-bad-row",
    ":2: per_eur: \"1e300\" is outside any currency's plausible rate")
add(X, "currency-empty", "date,currency,per_eur\n2026-01-01,,1.1\n", "fx-bad-row", ":2: currency: expected a 3-letter ISO 4217 code, found \"\"")
add(X, "too-few-fields", "date,currency,per_eur\n2026-01-01,USD\n", "fx-bad-row", ":2: expected 3 fields (date,currency,per_eur), found 2")
add(X, "unterminated-quote", 'date,currency,per_eur\n2026-01-01,"USD,1.1\n', "fx-bad-row", ":2: unterminated quoted field")
add(X, "invalid-utf8", b"date,currency,per_eur\n2026-01-01,US\xff,1.1\n", "fx-bad-row", ":2: invalid UTF-8 in field 2")
add(X, "bom-header-ok", "\ufeffdate,currency,per_eur\n2026-01-01,USD,1.1\n", "ok:1", "")
add(X, "same-rate-twice-ok", "date,currency,per_eur\n2026-01-01,USD,1.1\n2026-01-01,USD,1.10\n", "ok:1", "")
add(X, "conflicting-rates", "date,currency,per_eur\n2026-01-01,USD,1.1\n2026-01-02,USD,1.2\n2026-01-01,USD,1.3\n",
    "fx-conflict", ":2 and :4 give USD on 2026-01-01 two rates (1.1 and 1.3)")

# ---------------------------------------------------------------- config files
G = "config"
APP = "apps:\n  - bundle_id: com.example.coins\n"
SRC = "sources:\n  - {name: r, kind: receipts, path: r.jsonl}\n"


def config(text, expect, reason, name):
    add(G, name, text, expect, reason)


config("apps: [\n", "config-error", "YAML syntax error", "yaml-unclosed-bracket")
config("apps:\n\t- bundle_id: x\n", "config-error", "YAML syntax error", "yaml-tab-indent")
config("store: a\nstore: b\n" + APP, "config-error", "YAML syntax error", "yaml-duplicate-key")
config("- store: a\n", "config-error", "the top level must be a mapping of keys", "top-level-list")
config("just text\n", "config-error", "the top level must be a mapping of keys", "top-level-scalar")
config("", "config-error", "the top level must be a mapping of keys", "empty-file")
config("# only a comment\n", "config-error", "the top level must be a mapping of keys", "comment-only")
config(APP + "stores: x\n", "config-error", "stores: unknown key", "unknown-top-key")
config(APP + "store: [a, b]\n", "config-error", "store: expected text, found a list", "store-list")
config(APP + "rules: {a: 1}\n", "config-error", "rules: expected text, found a mapping", "rules-mapping")
config(APP + "reference_currency: usd\n", "config-error", "reference_currency: expected an ISO 4217 code",
       "currency-lowercase")
config(APP + "reference_currency: 840\n", "config-error", "reference_currency: expected an ISO 4217 code",
       "currency-number")
config(APP + "trust: certs/root.der\n", "config-error", "trust: expected a list, found text", "trust-not-list")
config(APP + "trust: [1, 2]\n", "config-error", "trust[0]: expected text, found a number", "trust-numbers")
config(APP + "trust_apple_root: yes please\n", "config-error", "trust_apple_root: expected true or false, found text",
       "trust-apple-root-text")
config(APP + "testers: {a: 1}\n", "config-error", "testers: expected a list, found a mapping", "testers-mapping")
config("store: x\n", "config-error", "apps: at least one app is required", "apps-missing")
config("apps: []\n", "config-error", "apps: at least one app is required", "apps-empty")
config("apps: com.example\n", "config-error", "apps: expected a list, found text", "apps-text")
config("apps:\n  - com.example\n", "config-error", "apps[0]: expected a mapping, found text", "app-text")
config("apps:\n  - app_apple_id: 1\n", "config-error", "apps[0].bundle_id: is required", "app-no-bundle")
config(APP + "    bundle: x\n", "config-error", "apps[0].bundle: unknown key", "app-unknown-key")
config(APP + "    app_apple_id: twelve\n", "config-error", "apps[0].app_apple_id: expected a whole number, found text",
       "app-apple-id-text")
config(APP + "    app_apple_id: true\n", "config-error", "apps[0].app_apple_id: expected a whole number, found a boolean",
       "app-apple-id-bool")
config(APP + "    environments: [Production, Staging]\n", "config-error",
       "apps[0].environments[1]: unknown environment 'Staging'", "unknown-environment")
config(APP + "    environments: Production\n", "config-error", "apps[0].environments: expected a list",
       "environments-text")
config(APP + "    products:\n      - {product_id: p, type: Subscription}\n", "config-error",
       "apps[0].products[0].type: unknown type 'Subscription'", "product-unknown-type")
config(APP + "    products:\n      - {type: Consumable}\n", "config-error", "apps[0].products[0].product_id: is required",
       "product-no-id")
config(APP + "    products:\n      - {product_id: p, units: many}\n", "config-error",
       "apps[0].products[0].units: expected a whole number", "product-units-text")
config(APP + "    products:\n      - {product_id: p, price: cheap}\n", "config-error",
       "apps[0].products[0].price: expected a decimal price", "product-price-text")
config(APP + "    products:\n      - {product_id: p, price: [1]}\n", "config-error",
       "apps[0].products[0].price: expected a decimal price", "product-price-list")
config(APP + "    products:\n      - {product_id: p, sku: 1}\n", "config-error", "apps[0].products[0].sku: unknown key",
       "product-unknown-key")
config(APP + "    products: p\n", "config-error", "apps[0].products: expected a list", "products-text")
config(APP + "rule_params: [1]\n", "config-error", "rule_params: expected a mapping of rule id to parameters",
       "rule-params-list")
config(APP + "rule_params:\n  IAP-014: 24\n", "config-error", "rule_params.IAP-014: expected a mapping of parameters",
       "rule-params-scalar")
config(APP + "rule_params:\n  IAP-014: {grace_hours: [24]}\n", "config-error",
       "rule_params.IAP-014.grace_hours: expected a number or text", "rule-param-list")
config("apps:\n  - {1: x, 2: y}\n", "config-error", "apps[0].1: unknown key",
       "app-number-keys")
config("1: x\n" + APP, "config-error", "1: unknown key", "top-level-number-key")
# Found by FuzzConfigYAML: a list or mapping as a key made Yams trap (force unwrap) while building values.
config("? !29o: t:", "config-error", "line 1: a key must be text, not a list or a mapping", "fuzz-complex-key")
config(APP + "? [a, b]\n: x\n", "config-error", "line 3: a key must be text", "complex-key-list")
config(APP + "testers: {? {a: 1} : x}\n", "config-error", "a key must be text", "complex-key-mapping")
config("base: &b {? [k] : v}\n" + APP + "x:\n  <<: *b\n", "config-error", "a key must be text", "complex-key-merged")
config(APP + "sources: {a: 1}\n", "config-error", "sources: expected a list, found a mapping", "sources-mapping")
config(APP + "sources:\n  - receipts.jsonl\n", "config-error", "sources[0]: expected a mapping, found text",
       "source-text")
config(APP + "sources:\n  - {name: r, kind: receipt, path: r.jsonl}\n", "config-error",
       "sources[0].kind: unknown kind 'receipt'", "source-unknown-kind")
config(APP + "sources:\n  - {name: r, path: r.jsonl}\n", "config-error", "sources[0].kind: is required",
       "source-no-kind")
config(APP + "sources:\n  - {name: r, kind: receipts}\n", "config-error", "sources[0].path: is required",
       "source-no-path")
config(APP + "sources:\n  - {name: r, kind: receipts, format: xml, path: r}\n", "config-error",
       "sources[0].format: unknown format 'xml'", "source-unknown-format")
config(APP + "sources:\n  - {name: r, kind: receipts, format: csv, path: r}\n", "config-error",
       "sources[0].format: receipts sources are JSON Lines only", "source-receipts-csv")
config(APP + "sources:\n  - {name: o, kind: orders, format: sqlite, path: b.db}\n", "config-error",
       "sources[0].query: a sqlite source needs a query", "source-sqlite-no-query")
config(APP + "sources:\n  - {name: o, kind: orders, format: csv, path: o.csv, max_bad_share: 2}\n", "config-error",
       "sources[0].max_bad_share: expected a number above 0 and at most 1", "source-max-bad-share-above-one")
config(APP + "sources:\n  - {name: o, kind: orders, format: csv, path: o.csv, max_bad_share: 0}\n", "config-error",
       "sources[0].max_bad_share: expected a number above 0", "source-max-bad-share-zero")
config(APP + "sources:\n  - {name: o, kind: orders, format: csv, path: o.csv, min_records: 0}\n", "config-error",
       "sources[0].min_records: expected a whole number", "source-min-records-zero")
config(APP + "sources:\n  - {name: o, kind: orders, format: csv, path: o.csv, absent_columns: [order_id]}\n",
       "config-error", "sources[0].absent_columns[0]: 'order_id' is not a field the rules need", "source-absent-key-column")
config(APP + "sources:\n  - {name: c, kind: credits, path: c.jsonl, absent_columns: [user_id]}\n",
       "config-error", "'user_id' is not a field the rules need from credits sources", "source-absent-required-field")
config(APP + "sources:\n  - {name: o, kind: orders, path: a}\n  - {name: o, kind: credits, path: b}\n", "config-error",
       "the source name 'o' is used twice", "source-duplicate-name")
config(APP + "sources:\n  - {name: o, kind: orders, path: a, columns: 3}\n", "config-error",
       "sources[0].columns: unknown key", "source-unknown-key")
config(b"apps:\n  - bundle_id: com.\xff\n", "config-error", "not UTF-8 text", "invalid-utf8")
config("a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
       "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n" + APP,
       "config-error", "YAML values once aliases are expanded", "billion-laughs")
config("apps:\n" + "  " * 1 + "- " + "[" * 2000 + "]" * 2000 + "\n", "config-error", "Maximum nesting level",
       "deep-nesting")
config(APP + "apps2: " + "[" * 500 + "]" * 500 + "\n", "config-error", "apps2: unknown key", "nesting-500")
config(APP + "    products:\n      - {product_id: p, price: \"9223372036854775.999\"}\n", "config-error",
       "apps[0].products[0].price: expected a decimal price", "product-price-overflow")

# ---------------------------------------------------------------- rule files
RL = "rules"
RULE = """id: IAP-950
title: Test rule
description: A test rule.
version: "1"
status: stable
level: high
query: |
  SELECT transaction_id FROM transactions WHERE quantity > :limit
entity_key: [transaction_id]
params:
  limit: 1
"""


def rule(expect, reason, name, text=None, **replace):
    t = RULE if text is None else text
    for old, new in replace.items():
        t = t.replace(old, new)
    add(RL, name, t, expect, reason)


rule("rule-error", "YAML", "yaml-unclosed-quote", text=RULE.replace('version: "1"', 'version: "1'))
rule("rule-error", "YAML", "yaml-bad-indent", text=RULE.replace("  limit: 1", " limit: 1\n  other: 2"))
rule("rule-error", "YAML", "yaml-tab", text=RULE.replace("  limit: 1", "\tlimit: 1"))
rule("rule-error", "duplicate keys", "yaml-duplicate-key", text=RULE + "level: low\n")
rule("rule-error", "a rule file must be a YAML mapping of fields", "top-level-list", text="- id: IAP-950\n")
rule("rule-error", "a rule file must be a YAML mapping of fields", "empty-file", text="")
rule("rule-error", "bad level 'severe'", "unknown-level", text=RULE.replace("level: high", "level: severe"))
rule("rule-error", "level must be a single value", "level-list", text=RULE.replace("level: high", "level: [high]"))
rule("rule-error", "bad status 'beta'", "unknown-status", text=RULE.replace("status: stable", "status: beta"))
rule("rule-error", "unknown field 'severity'", "unknown-field", text=RULE + "severity: high\n")
rule("rule-error", "missing required field 'query'", "missing-query",
     text=RULE.replace("query: |\n  SELECT transaction_id FROM transactions WHERE quantity > :limit\n", ""))
rule("rule-error", "query is empty", "empty-query",
     text=RULE.replace("  SELECT transaction_id FROM transactions WHERE quantity > :limit\n", "  \n"))
rule("rule-error", "id must be non-empty letters", "id-with-spaces", text=RULE.replace("id: IAP-950", "id: IAP 950"))
rule("rule-error", "entity_key needs at least one column", "entity-key-empty",
     text=RULE.replace("entity_key: [transaction_id]", "entity_key: []"))
rule("rule-error", "params must be a mapping", "params-list", text=RULE.replace("  limit: 1", "  - limit"))
rule("rule-error", "parameter name 'max-limit' is not an identifier", "param-name-dash",
     text=RULE.replace("  limit: 1", "  max-limit: 1"))
rule("rule-error", "params.limit needs a default", "param-without-default",
     text=RULE.replace("  limit: 1", "  limit: {description: x}"))
rule("rule-error", "exceptions must be a list", "exceptions-mapping", text=RULE + "exceptions: {a: 1}\n")
rule("rule-error", "an exception needs an owner and a reason", "exception-no-owner",
     text=RULE + "exceptions:\n  - {match: {transaction_id: '1'}, reason: r, expires: 2030-01-01}\n")
rule("rule-error", "an exception needs expires: YYYY-MM-DD", "exception-bad-expires",
     text=RULE + "exceptions:\n  - {match: {transaction_id: '1'}, owner: o, reason: r, expires: soon}\n")
rule("rule-error", "tests must be a list", "tests-mapping", text=RULE + "tests: {a: 1}\n")
rule("rule-error", "a test needs a name", "test-no-name", text=RULE + "tests:\n  - {hits: []}\n")
rule("rule-error", "evidence.rows.limit must be 1", "evidence-limit-zero",
     text=RULE + "evidence:\n  rows:\n    - {kind: k, query: 'SELECT 1', limit: 0}\n")
rule("rule-error", "not valid UTF-8", "invalid-utf8", text=None)
cases.pop()
add(RL, "invalid-utf8", RULE.replace("Test rule", "Test \udcff rule").encode("utf-8", "surrogateescape"), "rule-error",
    "not valid UTF-8")
rule("rule-issue", "query does not prepare", "sql-syntax-error",
     text=RULE.replace("WHERE quantity > :limit", "WHERE quantity > :limit AND"))
rule("rule-issue", "query does not prepare", "sql-unknown-column",
     text=RULE.replace("WHERE quantity > :limit", "WHERE quantitty > :limit"))
rule("rule-issue", "query uses unknown parameter :grace", "sql-unknown-param",
     text=RULE.replace("quantity > :limit", "quantity > :limit AND purchase_date > :grace"))
rule("rule-issue", "entity_key column 'user_id' is not in the query's result", "entity-key-not-in-result",
     text=RULE.replace("entity_key: [transaction_id]", "entity_key: [user_id]"))
rule("rule-issue", "query", "sql-private-table",
     text=RULE.replace("FROM transactions WHERE", "FROM apple_transaction WHERE"))

# ---------------------------------------------------------------- trusted root certificate files
T = "trust"
add(T, "truncated-der", bytes.fromhex("3082024330820 1c9a003020102".replace(" ", "")), "trust-error",
    "is not a DER certificate")
add(T, "empty", b"", "trust-error", "is not a DER certificate")
add(T, "random-bytes", bytes((i * 37 + 11) % 256 for i in range(300)), "trust-error", "is not a DER certificate")
add(T, "der-integer-not-certificate", bytes.fromhex("020101"), "trust-error", "is not a DER certificate")
add(T, "der-sequence-of-integers", bytes.fromhex("3006020101020102"), "trust-error", "is not a DER certificate")
add(T, "pem-instead-of-der.pem",
    "-----BEGIN CERTIFICATE-----\nMIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwS\n"
    "-----END CERTIFICATE-----\n", "trust-error", "PEM")
add(T, "private-key-pem.pem", "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n"
    "-----END PRIVATE KEY-----\n", "trust-error", "PEM")
add(T, "text-file", "this is not a certificate\n", "trust-error", "is not a DER certificate")

# ---------------------------------------------------------------- SQLite order sources (SQL builds the DB)
Q = "sqlite"
TABLE = ("CREATE TABLE orders (id TEXT, user_id TEXT, product_id TEXT, price TEXT, created_at TEXT);\n"
         "INSERT INTO orders VALUES ('o-1', 'u-1', 'com.example.coins.pack6', '4.99', '2026-01-01');\n")
GOODQ = "SELECT id AS order_id, user_id, product_id, price, created_at FROM orders ORDER BY id"
add(Q, "missing-table", f"-- query: SELECT id AS order_id FROM purchases\n{TABLE}", "source-error",
    "the configured query failed: no such table: purchases")
add(Q, "query-syntax-error", f"-- query: SELEC id FROM orders\n{TABLE}", "source-error",
    "the configured query failed")
add(Q, "wrong-columns", f"-- query: SELECT id, user_id FROM orders\n{TABLE}", "quarantine@row 1", "order_id: missing")
add(Q, "bad-price-row", f"-- query: {GOODQ}\n{TABLE}"
    "INSERT INTO orders VALUES ('o-2', 'u-1', 'p', 'lots', '2026-01-01');\n"
    "INSERT INTO orders VALUES ('o-3', 'u-1', 'p', '1.00', '2026-01-01');\n", "quarantine@row 2",
    "price: expected a decimal like 0.99, found \"lots\"")
add(Q, "bad-time-row", f"-- query: {GOODQ}\n{TABLE}"
    "INSERT INTO orders VALUES ('o-2', 'u-1', 'p', '1.00', 'last week');\n", "quarantine@row 2",
    "created_at: expected epoch milliseconds")
add(Q, "blob-order-id", f"-- query: {GOODQ}\n{TABLE}"
    "INSERT INTO orders VALUES (x'00ff', 'u-1', 'p', '1.00', '2026-01-01');\n", "quarantine@row 2",
    "order_id: invalid UTF-8 or a NUL byte in the database's text")
add(Q, "text-invalid-utf8", f"-- query: {GOODQ}\n{TABLE}"
    "INSERT INTO orders VALUES ('o-2', CAST(x'752dff' AS TEXT), 'p', '1.00', '2026-01-01');\n", "quarantine@row 2",
    "user_id: invalid UTF-8 or a NUL byte in the database's text")
add(Q, "text-with-nul", f"-- query: {GOODQ}\n{TABLE}"
    "INSERT INTO orders VALUES ('o-2', CAST(x'750031' AS TEXT), 'p', '1.00', '2026-01-01');\n", "quarantine@row 2",
    "user_id: invalid UTF-8 or a NUL byte in the database's text")
add(Q, "write-statement", f"-- query: DELETE FROM orders\n{TABLE}", "source-error", "the configured query failed")
add("sqlite-raw", "not-a-db", "order_id,user_id\no-1,u-1\n", "source-error", "file is not a database")
add("sqlite-raw", "truncated-header", b"SQLite format 3\x00\x10\x00", "source-error", "file is not a database")

# ---------------------------------------------------------------- whole sources (a broken export must not look like a quiet day)
OJ = "source-orders-jsonl"
GOOD_ORDERS = [order(order_id=f"o-{i}", transaction_id=str(2000000000000000 + i)) for i in range(1, 5)]
add(OJ, "cr-only-line-ends", "\r".join(GOOD_ORDERS) + "\r", "partial", "no good record")
add(OJ, "whole-json-array", "[\n" + ",\n".join(GOOD_ORDERS) + "\n]\n", "partial", "above the 50 % limit")
add(OJ, "pretty-printed-objects", json.dumps(json.loads(GOOD_ORDERS[0]), indent=2) + "\n", "partial", "no good record")
add(OJ, "one-bad-of-four-ok", "\n".join(GOOD_ORDERS[:3] + ["{"]) + "\n", "ok:3", "")
add(OJ, "missing-user-id-everywhere",
    "\n".join(json.dumps({k: v for k, v in json.loads(o).items() if k != "user_id"}) for o in GOOD_ORDERS) + "\n",
    "partial", "no record has user_id")
add(OJ, "missing-price-and-currency",
    "\n".join(json.dumps({k: v for k, v in json.loads(o).items() if k not in ("price", "currency")})
              for o in GOOD_ORDERS) + "\n", "partial", "no record has price")
add(OJ, "gzip-file", gzip.compress(("\n".join(GOOD_ORDERS) + "\n").encode(), mtime=0), "partial",
    "the file is gzip-compressed")
add(OJ, "empty-file", "", "warning", "delivered 0 records")
OC = "source-orders-csv"
add(OC, "lone-cr", HEADER + ",transaction_id\n" + ROW1 + ",1\no-3,u-3,com.example.coins.pack6,4.99,USD,2026-01-03\r_000000009,3\n",
    "partial", "lone carriage return")
add(OC, "missing-transaction-id-column", HEADER + "\n" + ROW1 + "\n" + ROW2 + "\n", "partial",
    "no record has transaction_id")
add(OC, "all-rows-bad", HEADER + ",transaction_id\no-1,u-1,p,free,USD,2026-01-01,1\no-2,u-2,p,gratis,USD,2026-01-01,2\n",
    "partial", "no good record")
add(OC, "good-export-ok", HEADER + ",transaction_id\n" + ROW1 + ",1\n" + ROW2 + ",2\n", "ok:2", "")
add(OC, "header-only-first-delivery-warns", HEADER + ",transaction_id\n", "warning", "header only")
CCS = "source-credits-csv"
add(CCS, "missing-units-column", "credit_id,transaction_id,user_id,credited_at\nc-1,1,u-1,2026-01-01\n", "partial",
    "no good record")
add(CCS, "missing-user-id-column", "credit_id,transaction_id,units,credited_at\nc-1,1,5,2026-01-01\n", "partial",
    "no good record")

# ---------------------------------------------------------------- write the manifest
with open(os.path.join(HERE, "cases.tsv"), "w") as f:
    f.write("# file\tformat\texpect\treason (see make-corpus.py)\n")
    for row in cases:
        f.write("\t".join(row) + "\n")
print(f"{len(cases)} cases")
