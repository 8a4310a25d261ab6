#!/usr/bin/env python3
"""The whole-pipeline peer of `iapguard run`: what an analyst would write with DuckDB + orjson + cryptography.

  peer_pipeline.py CONFIG RULES.json [--workers N] [--keep DIR] [--database FILE]

CONFIG is a world's iapguard.yml (its sources, apps, trust list, testers and FX file); RULES.json is the rule
list iapguard-bench writes ({"id", "sql", "params"}, parameters bound as iapguard binds them). --keep DIR keeps
the workers' decoded rows, --database FILE the DuckDB tables (to compare them with iapguard's store).

Stages, each timed:
  decode + verify  N worker processes (multiprocessing) read byte ranges of the JSON Lines sources with orjson,
                   decode every compact JWS and verify it: ES256 over header.payload with the leaf's key, the
                   x5c chain leaf -> intermediate -> a configured trusted root checked once per distinct chain
                   and process (cached), Apple's marker OIDs (1.2.840.113635.100.6.11.1 on the leaf,
                   1.2.840.113635.100.6.2.1 on the intermediate), validity at the payload's signedDate, then the
                   claims (configured bundle id, allowed environment, appAppleId of Production notifications).
                   Each worker writes its decoded rows as JSON Lines; `decode` and `verify` are the workers'
                   seconds in each divided by N, `decode_verify_wall` the wall time of the pass.
  load             DuckDB (N threads) reads the workers' rows, the orders CSV and the credits JSON Lines, and
                   builds tables shaped like iapguard's views (sightings, transactions, notifications, refunds,
                   orders, credits, apps, catalog, testers, fx_rates).
  rules            each rule's SQL, parameters bound by rule_sql.bind.

The trusted roots are the config's `trust:` files; `trust_apple_root` is not honoured (generated worlds hold no
Apple-signed data). A record that does not decode is counted as a decode error (quarantined) and skipped.

Prints one JSON object on stdout: seconds per stage, records per stage, verification outcomes by kind and
reason, decode errors, rows per rule and peak RSS (this process and the largest worker, getrusage).
Needs: pip install duckdb orjson cryptography pyyaml
"""
import base64
import csv
import hashlib
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time

try:
    import duckdb
    import orjson
    import yaml
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
except ImportError as missing:
    sys.exit(f"peer_pipeline.py: {missing}; install with: pip install duckdb orjson cryptography pyyaml")

from rule_sql import bind

LEAF_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
INTERMEDIATE_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")
SIGNED_BY_APPLE = {"Production", "Sandbox"}
KNOWN_ENVIRONMENTS = {"Production", "Sandbox", "Xcode", "LocalTesting"}
CHUNK_BYTES = 8 << 20

SIGHTING_COLUMNS = {
    "transaction_id": "VARCHAR", "original_transaction_id": "VARCHAR", "web_order_line_item_id": "VARCHAR",
    "bundle_id": "VARCHAR", "product_id": "VARCHAR", "type": "VARCHAR", "quantity": "BIGINT",
    "purchase_date": "BIGINT", "original_purchase_date": "BIGINT", "expires_date": "BIGINT",
    "environment": "VARCHAR", "storefront": "VARCHAR", "currency": "VARCHAR", "price": "BIGINT",
    "app_account_token": "VARCHAR", "in_app_ownership_type": "VARCHAR", "transaction_reason": "VARCHAR",
    "revocation_date": "BIGINT", "revocation_reason": "BIGINT", "revocation_type": "VARCHAR",
    "revocation_percentage": "BIGINT", "signed_date": "BIGINT", "app_transaction_id": "VARCHAR",
    "offer_type": "BIGINT", "offer_identifier": "VARCHAR", "offer_discount_type": "VARCHAR",
    "offer_period": "VARCHAR", "billing_plan_type": "VARCHAR", "source_kind": "VARCHAR",
    "source_name": "VARCHAR", "source_ref": "VARCHAR", "receipt_key": "VARCHAR", "receipt_status": "BIGINT",
    "submitted_by_user_id": "VARCHAR", "submitted_order_id": "VARCHAR", "received_at": "BIGINT",
    "verification": "VARCHAR", "verification_reason": "VARCHAR", "anomalies": "VARCHAR",
}
NOTIFICATION_COLUMNS = {
    "notification_uuid": "VARCHAR", "notification_type": "VARCHAR", "subtype": "VARCHAR", "signed_date": "BIGINT",
    "environment": "VARCHAR", "bundle_id": "VARCHAR", "app_apple_id": "BIGINT", "transaction_id": "VARCHAR",
    "original_transaction_id": "VARCHAR", "product_id": "VARCHAR", "revocation_date": "BIGINT",
    "revocation_reason": "BIGINT", "revocation_percentage": "BIGINT", "auto_renew_product_id": "VARCHAR",
    "auto_renew_status": "BIGINT", "consumption_request_reason": "VARCHAR", "verification": "VARCHAR",
    "verification_reason": "VARCHAR", "source_name": "VARCHAR", "source_ref": "VARCHAR",
    "grace_period_expires_date": "BIGINT",
}


class BadRecord(Exception):
    pass


# ---------------------------------------------------------------------------------------------------------
# Verification (in the workers)

POLICY = {}  # set by init_worker: trusted roots, apps
CHAINS = {}  # (leaf b64, intermediate b64) -> ("ok", key, not_before_ms, not_after_ms) | ("failed", reason)


def init_worker(root_ders, apps):
    POLICY["roots"] = [x509.load_der_x509_certificate(der) for der in root_ders]
    POLICY["apps"] = apps
    POLICY["any_env"] = set().union(*[set(a["environments"]) for a in apps.values()]) if apps else set()


def epoch_ms(moment):
    return int(moment.timestamp() * 1000)


def evaluate_chain(leaf_b64, intermediate_b64):
    try:
        leaf = x509.load_der_x509_certificate(base64.b64decode(leaf_b64))
        intermediate = x509.load_der_x509_certificate(base64.b64decode(intermediate_b64))
    except Exception as error:  # noqa: BLE001 — any undecodable certificate fails the chain
        return ("failed", "bad-chain", f"certificate does not decode: {error}")
    root = None
    for candidate in POLICY["roots"]:
        if candidate.subject != intermediate.issuer:
            continue
        try:
            intermediate.verify_directly_issued_by(candidate)
            root = candidate
            break
        except (ValueError, TypeError, InvalidSignature):
            continue
    if root is None:
        return ("failed", "chain-untrusted", "the intermediate is not signed by a trusted root")
    try:
        leaf.verify_directly_issued_by(intermediate)
    except (ValueError, TypeError, InvalidSignature):
        return ("failed", "chain-untrusted", "the leaf is not signed by the intermediate")
    try:
        constraints = intermediate.extensions.get_extension_for_class(x509.BasicConstraints).value
        if not constraints.ca:
            return ("failed", "chain-untrusted", "the intermediate is not a CA")
    except x509.ExtensionNotFound:
        return ("failed", "chain-untrusted", "the intermediate has no basic constraints")
    for cert, oid, name in ((leaf, LEAF_OID, "leaf"), (intermediate, INTERMEDIATE_OID, "intermediate")):
        try:
            cert.extensions.get_extension_for_oid(oid)
        except x509.ExtensionNotFound:
            return ("failed", "oid-missing", f"the {name} lacks {oid.dotted_string}")
    key = leaf.public_key()
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        return ("failed", "bad-chain", "the leaf key is not P-256")
    certs = (leaf, intermediate, root)
    not_before = max(epoch_ms(c.not_valid_before_utc) for c in certs)
    not_after = min(epoch_ms(c.not_valid_after_utc) for c in certs)
    return ("ok", key, not_before, not_after)


def check_environment(value, allowed):
    if value is None:
        return ("failed", "bad-format")
    if value not in KNOWN_ENVIRONMENTS:
        return ("failed", "wrong-environment")
    if value not in SIGNED_BY_APPLE or value not in allowed:
        return ("failed", "wrong-environment")
    return ("verified", None)


def check_claims(payload, kind):
    apps = POLICY["apps"]
    if kind == "transaction":
        bundle = payload.get("bundleId")
        if bundle is None:
            return ("failed", "bad-format")
        if bundle not in apps:
            return ("failed", "wrong-bundle")
        return check_environment(payload.get("environment"), apps[bundle]["environments"])
    if kind == "renewal":
        return check_environment(payload.get("environment"), POLICY["any_env"])
    data = payload.get("data") or payload.get("summary")
    if not isinstance(data, dict):
        return ("failed", "bad-format")
    bundle = data.get("bundleId")
    if bundle is None:
        return ("failed", "bad-format")
    if bundle not in apps:
        return ("failed", "wrong-bundle")
    outcome = check_environment(data.get("environment"), apps[bundle]["environments"])
    if outcome[0] != "verified":
        return outcome
    expected = apps[bundle]["app_apple_id"]
    if data.get("environment") == "Production" and expected is not None and data.get("appAppleId") != expected:
        return ("failed", "wrong-app")
    return ("verified", None)


def verify(jws, kind):
    """(outcome, reason) of one decoded JWS: header, chain (cached), validity, ES256 signature, claims.

    The reasons use iapguard's names (bad-alg, bad-chain, chain-untrusted, oid-missing, expired, bad-signature,
    bad-format, wrong-bundle, wrong-environment, wrong-app, nested-failed) so the bench can compare them.
    """
    header, payload, signing_input, signature = jws
    if header.get("alg") != "ES256":
        return ("failed", "bad-alg")
    x5c = header.get("x5c")
    if not isinstance(x5c, list) or len(x5c) != 3 or not all(isinstance(c, str) for c in x5c):
        return ("failed", "bad-chain")
    signed_date = payload.get("signedDate")
    if not isinstance(signed_date, int) or isinstance(signed_date, bool):
        return ("failed", "bad-format")
    chain_key = (x5c[0], x5c[1])
    chain = CHAINS.get(chain_key)
    if chain is None:
        chain = evaluate_chain(x5c[0], x5c[1])
        CHAINS[chain_key] = chain
    if chain[0] != "ok":
        return ("failed", chain[1])
    _, key, not_before, not_after = chain
    if signed_date < not_before or signed_date > not_after:
        return ("failed", "expired")
    if len(signature) != 64:
        return ("failed", "bad-signature")
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        key.verify(der, signing_input, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return ("failed", "bad-signature")
    return check_claims(payload, kind)


# ---------------------------------------------------------------------------------------------------------
# Decoding (in the workers)

def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def decode_jws(compact):
    if not isinstance(compact, str):
        raise BadRecord("bad-format: not a string")
    parts = compact.split(".")
    if len(parts) != 3:
        raise BadRecord("bad-format: not three dot-separated parts")
    try:
        header = orjson.loads(b64url(parts[0]))
        payload = orjson.loads(b64url(parts[1]))
        signature = b64url(parts[2])
    except (ValueError, orjson.JSONDecodeError) as error:
        raise BadRecord(f"bad-format: {error}") from None
    if not isinstance(header, dict) or not isinstance(payload, dict):
        raise BadRecord("bad-format: header or payload is not an object")
    return (header, payload, (parts[0] + "." + parts[1]).encode("ascii"), signature)


def integer(value):
    """Apple's numbers, also as strings ("1", "1767225590000")."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise BadRecord(f"not an integer: {value[:40]!r}") from None
    raise BadRecord(f"not an integer: {value!r}")


def time_ms(value):
    if isinstance(value, str) and value and not value.lstrip("-").isdigit():
        from datetime import datetime

        try:
            return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            raise BadRecord(f"not a time: {value[:40]!r}") from None
    return integer(value)


def text(value):
    if value is None:
        return None
    if isinstance(value, str):
        return value
    raise BadRecord(f"expected text, found {type(value).__name__}")


def transaction_row(p):
    transaction_id = text(p.get("transactionId"))
    if not transaction_id:
        raise BadRecord("transactionId missing")
    token = text(p.get("appAccountToken"))
    return {
        "transaction_id": transaction_id, "original_transaction_id": text(p.get("originalTransactionId")),
        "web_order_line_item_id": text(p.get("webOrderLineItemId")), "bundle_id": text(p.get("bundleId")),
        "product_id": text(p.get("productId")), "type": text(p.get("type")), "quantity": integer(p.get("quantity")),
        "purchase_date": integer(p.get("purchaseDate")),
        "original_purchase_date": integer(p.get("originalPurchaseDate")),
        "expires_date": integer(p.get("expiresDate")), "environment": text(p.get("environment")),
        "storefront": text(p.get("storefront")), "currency": text(p.get("currency")),
        "price": integer(p.get("price")), "app_account_token": token.lower() if token else None,
        "in_app_ownership_type": text(p.get("inAppOwnershipType")),
        "transaction_reason": text(p.get("transactionReason")), "revocation_date": integer(p.get("revocationDate")),
        "revocation_reason": integer(p.get("revocationReason")), "revocation_type": text(p.get("revocationType")),
        "revocation_percentage": integer(p.get("revocationPercentage")), "signed_date": integer(p.get("signedDate")),
        "app_transaction_id": text(p.get("appTransactionId")),
        "offer_type": integer(p.get("offerType")), "offer_identifier": text(p.get("offerIdentifier")),
        "offer_discount_type": text(p.get("offerDiscountType")), "offer_period": text(p.get("offerPeriod")),
        "billing_plan_type": text(p.get("billingPlanType")),
    }


def legacy_date(raw):
    """Apple's legacy date text ("2026-01-01 00:00:00 Etc/GMT") as epoch ms; None for other zones."""
    from datetime import datetime, timezone

    parts = raw.split(" ")
    if len(parts) != 3 or parts[2] not in ("Etc/GMT", "GMT", "UTC", "Etc/UTC"):
        return None
    try:
        moment = datetime.strptime(parts[0] + " " + parts[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    return int(moment.timestamp() * 1000)


def receipt_rows(obj, source_name, ref):
    if isinstance(obj.get("response"), dict):
        response = obj["response"]
        user_id, order_id = text(obj.get("user_id")), text(obj.get("order_id"))
        received_at, receipt_data = time_ms(obj.get("received_at")), text(obj.get("receipt_data"))
    elif "status" in obj:
        response, user_id, order_id, received_at, receipt_data = obj, None, None, None, None
    else:
        raise BadRecord("neither a verifyReceipt response nor a wrapped one")
    status = integer(response.get("status"))
    if status is None:
        raise BadRecord("status missing")
    environment = text(response.get("environment"))
    receipt = response.get("receipt") if isinstance(response.get("receipt"), dict) else {}
    bundle_id = text(receipt.get("bundle_id"))
    request_date = integer(receipt.get("request_date_ms"))
    entries = list(receipt.get("in_app") or []) + list(response.get("latest_receipt_info") or [])
    rows = []
    seen = set()
    for entry in entries:
        if not isinstance(entry, dict):
            raise BadRecord("an in_app entry is not an object")
        transaction_id = text(entry.get("transaction_id"))
        if not transaction_id:
            raise BadRecord("transaction_id missing")
        row = {
            "transaction_id": transaction_id, "original_transaction_id": text(entry.get("original_transaction_id")),
            "web_order_line_item_id": text(entry.get("web_order_line_item_id")), "bundle_id": bundle_id,
            "product_id": text(entry.get("product_id")), "quantity": integer(entry.get("quantity")),
            "purchase_date": integer(entry.get("purchase_date_ms")),
            "original_purchase_date": integer(entry.get("original_purchase_date_ms")),
            "expires_date": integer(entry.get("expires_date_ms")), "environment": environment,
            "in_app_ownership_type": text(entry.get("in_app_ownership_type")),
            "revocation_date": integer(entry.get("cancellation_date_ms")),
            "revocation_reason": integer(entry.get("cancellation_reason")), "signed_date": request_date,
        }
        anomalies = []
        for name, ms in (("purchase_date", row["purchase_date"]), ("original_purchase_date",
                         row["original_purchase_date"]), ("expires_date", row["expires_date"]),
                         ("cancellation_date", row["revocation_date"])):
            raw = entry.get(name)
            if isinstance(raw, str) and ms is not None:
                parsed = legacy_date(raw)
                if parsed is not None and abs(parsed - ms) > 1000:
                    anomalies.append("date-mismatch")
                    break
        if row["expires_date"] is not None and row["purchase_date"] is not None \
                and row["expires_date"] - row["purchase_date"] > 10 * 366 * 86_400_000:
            anomalies.append("expiry-far-future")
        if bundle_id is not None and row["product_id"] is not None and not row["product_id"].startswith(bundle_id + "."):
            anomalies.append("product-outside-bundle")
        if not (transaction_id.isascii() and transaction_id.isdigit()):
            anomalies.append("non-numeric-id")
        row["anomalies"] = ",".join(anomalies) or None
        # The same transaction in in_app and latest_receipt_info is one sighting per distinct content.
        content = tuple(row.values())
        if content not in seen:
            seen.add(content)
            rows.append(row)
    if receipt_data:
        receipt_key = hashlib.sha256(receipt_data.encode()).hexdigest()
    else:
        ids = ",".join(sorted(r["transaction_id"] for r in rows))
        receipt_key = hashlib.sha256(f"{bundle_id or ''}|{ids}".encode()).hexdigest()
    for row in rows:
        row.update({"source_kind": "receipt", "source_name": source_name, "source_ref": ref,
                    "receipt_key": receipt_key, "receipt_status": status, "submitted_by_user_id": user_id,
                    "submitted_order_id": order_id, "received_at": received_at, "verification": "not-signed",
                    "verification_reason": f"status-{status}"})
    return rows


class Worker:
    """Decodes and verifies one byte range of one source; keeps its own seconds and counts."""

    def __init__(self, out):
        self.out = out
        self.verify_seconds = 0.0
        self.outcomes = {}
        self.errors = []

    def verified(self, jws, kind, label):
        start = time.perf_counter()
        outcome = verify(jws, kind)
        self.verify_seconds += time.perf_counter() - start
        key = f"{label} {outcome[0]}" + (f" {outcome[1]}" if outcome[1] else "")
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        return outcome

    def signed_transaction(self, line, source_name, ref):
        user_id = order_id = received_at = None
        stripped = line.strip()
        if stripped.startswith(b"{"):
            obj = orjson.loads(stripped)
            if not isinstance(obj, dict) or obj.get("signedTransactionInfo") is None:
                raise BadRecord("no signedTransactionInfo in the object")
            compact = text(obj["signedTransactionInfo"])
            user_id, order_id = text(obj.get("user_id")), text(obj.get("order_id"))
            received_at = time_ms(obj.get("received_at"))
        else:
            compact = stripped.decode("utf-8")
        jws = decode_jws(compact)
        row = transaction_row(jws[1])
        outcome = self.verified(jws, "transaction", "transaction")
        non_numeric = not (row["transaction_id"].isascii() and row["transaction_id"].isdigit())
        row.update({"source_kind": "jws", "source_name": source_name, "source_ref": ref,
                    "receipt_key": hashlib.sha256(compact.encode()).hexdigest(), "submitted_by_user_id": user_id,
                    "submitted_order_id": order_id, "received_at": received_at, "verification": outcome[0],
                    "verification_reason": outcome[1], "anomalies": "non-numeric-id" if non_numeric else None})
        return [row], []

    def notification(self, line, source_name, ref):
        obj = orjson.loads(line)
        if not isinstance(obj, dict) or obj.get("signedPayload") is None:
            raise BadRecord("no signedPayload in the object")
        received_at = time_ms(obj.get("received_at"))
        jws = decode_jws(text(obj["signedPayload"]))
        payload = jws[1]
        uuid = text(payload.get("notificationUUID"))
        if not uuid:
            raise BadRecord("notificationUUID missing")
        data = payload.get("data") or payload.get("summary") or {}
        if not isinstance(data, dict):
            raise BadRecord("data is not an object")
        # Decode the nested payloads before verifying anything: a record that does not decode is quarantined.
        nested = decode_jws(data["signedTransactionInfo"]) if data.get("signedTransactionInfo") is not None else None
        renewal = decode_jws(data["signedRenewalInfo"]) if data.get("signedRenewalInfo") is not None else None
        nested_row = transaction_row(nested[1]) if nested else None
        own = self.verified(jws, "notification", "notification-own")
        row = {"notification_uuid": uuid, "notification_type": text(payload.get("notificationType")),
               "subtype": text(payload.get("subtype")), "signed_date": integer(payload.get("signedDate")),
               "environment": text(data.get("environment")), "bundle_id": text(data.get("bundleId")),
               "app_apple_id": integer(data.get("appAppleId")),
               "consumption_request_reason": text(data.get("consumptionRequestReason")),
               "source_name": source_name, "source_ref": ref}
        sightings = []
        overall = own
        if nested:
            outcome = self.verified(nested, "transaction", "notification-transaction")
            if own[0] == "verified" and outcome[0] != "verified":
                overall = ("failed", "nested-failed")
            for field in ("transaction_id", "original_transaction_id", "product_id", "revocation_date",
                          "revocation_reason", "revocation_percentage"):
                row[field] = nested_row[field]
            nested_row.update({"source_kind": "notification", "source_name": source_name, "source_ref": ref,
                               "receipt_key": hashlib.sha256(data["signedTransactionInfo"].encode()).hexdigest(),
                               "received_at": received_at, "verification": outcome[0],
                               "verification_reason": outcome[1]})
            sightings.append(nested_row)
        if renewal:
            outcome = self.verified(renewal, "renewal", "notification-renewal")
            if overall[0] == "verified" and outcome[0] != "verified":
                overall = ("failed", "nested-failed")
            row["auto_renew_product_id"] = text(renewal[1].get("autoRenewProductId"))
            row["auto_renew_status"] = integer(renewal[1].get("autoRenewStatus"))
            row["grace_period_expires_date"] = integer(renewal[1].get("gracePeriodExpiresDate"))
            if row.get("original_transaction_id") is None:
                row["original_transaction_id"] = text(renewal[1].get("originalTransactionId"))
        row["verification"], row["verification_reason"] = overall
        key = f"notification {overall[0]}" + (f" {overall[1]}" if overall[1] else "")
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        return sightings, [row]


def decode_range(task):
    """One worker task: the lines of [start, end) of a JSON Lines source, decoded (and verified) to JSON Lines."""
    kind, source_name, path, start, end, out_dir, index = task
    began = time.perf_counter()
    worker = Worker(out_dir)
    sightings_path = os.path.join(out_dir, f"sightings-{index:05d}.jsonl")
    notifications_path = os.path.join(out_dir, f"notifications-{index:05d}.jsonl")
    records = 0
    with open(path, "rb") as source, open(sightings_path, "wb") as sightings_out, \
            open(notifications_path, "wb") as notifications_out:
        source.seek(start)
        position = start
        while position < end:
            line = source.readline()
            if not line:
                break
            # Records are referred to by the byte offset of their line (line numbers would need a pass over
            # everything before the range).
            ref = f"{os.path.basename(path)}@{position}"
            position += len(line)
            if not line.strip():
                continue
            records += 1
            try:
                if kind == "receipts":
                    obj = orjson.loads(line)
                    if not isinstance(obj, dict):
                        raise BadRecord("not an object")
                    sighting_rows, notification_rows = receipt_rows(obj, source_name, ref), []
                elif kind == "signed-transactions":
                    sighting_rows, notification_rows = worker.signed_transaction(line, source_name, ref)
                else:
                    sighting_rows, notification_rows = worker.notification(line, source_name, ref)
            except (BadRecord, ValueError, KeyError, TypeError, AttributeError) as error:
                worker.errors.append(f"{ref}: {error}")
                continue
            for row in sighting_rows:
                sightings_out.write(orjson.dumps(row) + b"\n")
            for row in notification_rows:
                notifications_out.write(orjson.dumps(row) + b"\n")
    seconds = time.perf_counter() - began
    return {"source": source_name, "records": records, "decode_seconds": seconds - worker.verify_seconds,
            "verify_seconds": worker.verify_seconds, "outcomes": worker.outcomes, "errors": worker.errors}


def ranges(path, pieces):
    """Byte ranges of about CHUNK_BYTES (at least `pieces`), each starting at the start of a line."""
    size = os.path.getsize(path)
    count = max(pieces, size // CHUNK_BYTES + 1)
    bounds = [0]
    with open(path, "rb") as handle:
        for i in range(1, count):
            handle.seek(max(size * i // count, bounds[-1]))
            if handle.tell() > 0:
                handle.readline()
            bounds.append(min(handle.tell(), size))
    bounds.append(size)
    bounds = sorted(set(bounds))
    return list(zip(bounds, bounds[1:]))


# ---------------------------------------------------------------------------------------------------------
# Config and load (in the main process)

def source_files(base, path):
    full = path if os.path.isabs(path) else os.path.join(base, path)
    if os.path.isdir(full):
        return [os.path.join(full, n) for n in sorted(os.listdir(full)) if not n.startswith(".")]
    return [full]


def milli(decimal_text):
    from decimal import Decimal

    return int(Decimal(str(decimal_text)) * 1000)


def sql_time(column):
    """A column of epoch milliseconds or RFC 3339 text (the data contract's times) as epoch ms."""
    return (f"CASE WHEN regexp_full_match({column}, '-?[0-9]+') THEN CAST({column} AS BIGINT) "
            f"ELSE epoch_ms(CAST(replace({column}, 'Z', '') AS TIMESTAMP)) END")


def csv_columns(path):
    """The column names of a CSV file's header row."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return set(next(csv.reader(handle), []))


def load(con, config, base, work, source_list):
    sightings = os.path.join(work, "sightings-*.jsonl")
    notifications = os.path.join(work, "notifications-*.jsonl")
    # sighting_id only orders a transaction's copies received at the same time (the store's is a hash).
    con.execute(f"CREATE TABLE sightings AS SELECT *, source_name || ':' || source_ref || ':' || transaction_id "
                f"AS sighting_id FROM read_json('{sightings}', format='newline_delimited', "
                f"columns={SIGHTING_COLUMNS!r})")
    # One row per notification_uuid, as the store keeps it.
    con.execute(f"CREATE TABLE notifications AS SELECT * FROM read_json('{notifications}', "
                f"format='newline_delimited', columns={NOTIFICATION_COLUMNS!r}) "
                "QUALIFY ROW_NUMBER() OVER (PARTITION BY notification_uuid) = 1")
    # The canonical copy: verified > not-signed > unverified, then the latest signedDate; failed copies never.
    con.execute("""
        CREATE TABLE transactions AS
        SELECT * EXCLUDE (rank) FROM (
          SELECT s.*, COUNT(*) OVER (PARTITION BY transaction_id) AS sighting_count,
                 ROW_NUMBER() OVER (PARTITION BY transaction_id ORDER BY
                   CASE verification WHEN 'verified' THEN 0 WHEN 'not-signed' THEN 1 ELSE 2 END,
                   signed_date DESC NULLS LAST) AS rank
          FROM sightings s WHERE verification <> 'failed')
        WHERE rank = 1""")
    con.execute("""
        CREATE TABLE refunds AS
        SELECT 'notification:' || notification_uuid AS event_id, transaction_id, original_transaction_id,
               notification_type AS event_type, COALESCE(revocation_date, signed_date) AS event_date,
               revocation_reason, revocation_percentage, 'notification' AS origin
        FROM notifications
        WHERE verification = 'verified'
          AND notification_type IN ('REFUND', 'REVOKE', 'REFUND_REVERSED', 'REFUND_DECLINED', 'CONSUMPTION_REQUEST')
        UNION ALL
        SELECT 'transaction:' || transaction_id, transaction_id, original_transaction_id,
               CASE WHEN revocation_reason IS NULL AND in_app_ownership_type = 'FAMILY_SHARED' THEN 'REVOKE'
                    ELSE 'REFUND' END, revocation_date, revocation_reason, revocation_percentage, 'transaction'
        FROM transactions WHERE revocation_date IS NOT NULL AND verification IN ('verified', 'not-signed')""")
    counts = {}
    for kind, files in source_list:
        if kind == "orders":
            tables = []
            for i, path in enumerate(files):
                present = csv_columns(path)

                def col(name, present=present):
                    return name if name in present else "NULL"

                price = ("CAST(ROUND(CAST(price AS DECIMAL(38, 6)) * 1000) AS BIGINT)" if "price" in present
                         else f"CAST({col('price_milli')} AS BIGINT)")
                con.execute(f"""
                    CREATE TABLE orders_{i} AS SELECT
                      order_id, {col('user_id')} AS user_id, {col('bundle_id')} AS bundle_id,
                      {col('product_id')} AS product_id, CAST({col('quantity')} AS BIGINT) AS quantity,
                      {price} AS price, {col('currency')} AS currency, {col('storefront')} AS storefront,
                      {col('user_country')} AS user_country, {sql_time(col('created_at'))} AS created_at,
                      {col('status')} AS status, {col('transaction_id')} AS transaction_id,
                      lower({col('app_account_token')}) AS app_account_token,
                      {col('application_username')} AS application_username, {col('environment')} AS environment
                    FROM read_csv(?, header = true, all_varchar = true)""", [path])
                tables.append(f"orders_{i}")
            union = " UNION ALL ".join(f"SELECT * FROM {t}" for t in tables)
            # One row per order_id: the last file (and line) wins, as later exports update an order.
            con.execute(f"CREATE OR REPLACE TABLE orders AS SELECT * FROM ({union}) "
                        "QUALIFY ROW_NUMBER() OVER (PARTITION BY order_id) = 1")
            counts["orders"] = con.execute("SELECT COUNT(*) FROM orders").fetchone()[0]
        elif kind == "credits":
            columns = {n: "VARCHAR" for n in ("credit_id", "transaction_id", "order_id", "user_id", "product_id",
                                              "units", "credited_at", "reversed_at", "reversal_reason",
                                              "consumed_units", "consumed_at")}
            con.execute(f"""
                CREATE OR REPLACE TABLE credits AS SELECT
                  credit_id, transaction_id, order_id, user_id, product_id, CAST(units AS BIGINT) AS units,
                  {sql_time('credited_at')} AS credited_at, {sql_time('reversed_at')} AS reversed_at,
                  reversal_reason, CAST(consumed_units AS BIGINT) AS consumed_units,
                  {sql_time('consumed_at')} AS consumed_at
                FROM read_json(?, format = 'newline_delimited', columns = {columns!r})
                QUALIFY ROW_NUMBER() OVER (PARTITION BY credit_id) = 1""", [files])
            counts["credits"] = con.execute("SELECT COUNT(*) FROM credits").fetchone()[0]
        elif kind == "users":
            tables = []
            for i, path in enumerate(files):
                present = csv_columns(path)

                def ucol(name, present=present):
                    return name if name in present else "NULL"

                con.execute(f"""
                    CREATE TABLE users_{i} AS SELECT
                      user_id, {ucol('country')} AS country, lower({ucol('app_account_token')}) AS app_account_token,
                      {ucol('application_username')} AS application_username,
                      {sql_time(ucol('created_at'))} AS created_at
                    FROM read_csv(?, header = true, all_varchar = true)""", [path])
                tables.append(f"users_{i}")
            union = " UNION ALL ".join(f"SELECT * FROM {t}" for t in tables)
            # One row per user_id: the last file (and line) wins, as the store's upsert does.
            con.execute(f"CREATE OR REPLACE TABLE users AS SELECT * FROM ({union}) "
                        "QUALIFY ROW_NUMBER() OVER (PARTITION BY user_id) = 1")
            counts["users"] = con.execute("SELECT COUNT(*) FROM users").fetchone()[0]
    for table, ddl in (("users", "user_id VARCHAR, country VARCHAR, app_account_token VARCHAR, "
                                 "application_username VARCHAR, created_at BIGINT"),
                       ("orders", "order_id VARCHAR, user_id VARCHAR, bundle_id VARCHAR, product_id VARCHAR, "
                                  "quantity BIGINT, price BIGINT, currency VARCHAR, storefront VARCHAR, "
                                  "user_country VARCHAR, created_at BIGINT, status VARCHAR, transaction_id VARCHAR, "
                                  "app_account_token VARCHAR, application_username VARCHAR, environment VARCHAR"),
                       ("credits", "credit_id VARCHAR, transaction_id VARCHAR, order_id VARCHAR, user_id VARCHAR, "
                                   "product_id VARCHAR, units BIGINT, credited_at BIGINT, reversed_at BIGINT, "
                                   "reversal_reason VARCHAR, consumed_units BIGINT, consumed_at BIGINT")):
        con.execute(f"CREATE TABLE IF NOT EXISTS {table} ({ddl})")
    # Ledger rows of negative units are clawbacks, kept apart from the credits as the store's views keep them.
    con.execute("CREATE TABLE clawbacks AS SELECT credit_id, transaction_id, order_id, user_id, product_id, units, "
                "credited_at, reversal_reason, CAST(NULL AS VARCHAR) AS source_name, "
                "CAST(NULL AS VARCHAR) AS source_ref FROM credits WHERE units < 0")
    con.execute("DELETE FROM credits WHERE units < 0")
    # The config's reference tables.
    con.execute("CREATE TABLE apps (bundle_id VARCHAR, app_apple_id BIGINT, environments VARCHAR)")
    con.execute("CREATE TABLE catalog (bundle_id VARCHAR, product_id VARCHAR, type VARCHAR, units BIGINT, "
                "ref_price BIGINT, ref_currency VARCHAR)")
    for app in config.get("apps") or []:
        con.execute("INSERT INTO apps VALUES (?, ?, ?)", [app["bundle_id"], app.get("app_apple_id"),
                                                          ",".join(app.get("environments") or [])])
        for product in app.get("products") or []:
            con.execute("INSERT INTO catalog VALUES (?, ?, ?, ?, ?, ?)", [
                app["bundle_id"], product["product_id"], product.get("type"), product.get("units"),
                milli(product["price"]) if product.get("price") is not None else None, product.get("currency")])
    con.execute("CREATE TABLE testers (user_id VARCHAR, note VARCHAR)")
    for tester in config.get("testers") or []:
        user = tester if isinstance(tester, str) else tester.get("user_id")
        con.execute("INSERT INTO testers VALUES (?, NULL)", [str(user)])
    con.execute("CREATE TABLE fx_rates (currency VARCHAR, rate_date BIGINT, per_eur DOUBLE, source VARCHAR)")
    if config.get("fx_rates"):
        fx = source_files(base, config["fx_rates"])[0]
        con.execute("INSERT INTO fx_rates SELECT currency, epoch_ms(CAST(date AS TIMESTAMP)), "
                    "CAST(per_eur AS DOUBLE), 'config' FROM read_csv(?, header = true, all_varchar = true)", [fx])
    # The peer asks no App Store Server API: nothing is waiting for Apple's answer.
    con.execute("CREATE TABLE unchecked_transactions (transaction_id VARCHAR, source_name VARCHAR, reason VARCHAR, "
                "run_id BIGINT)")
    # Rules that read earlier findings see none (a first run).
    con.execute("CREATE TABLE findings (rule_id VARCHAR, entity_key VARCHAR, status VARCHAR, transaction_id VARCHAR, "
                "user_id VARCHAR, first_run_id BIGINT, last_run_id BIGINT)")
    for table in ("sightings", "transactions", "notifications", "refunds"):
        counts[table] = con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    return counts


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    config_path, rules_path = args[0], args[1]
    workers = int(args[args.index("--workers") + 1]) if "--workers" in args else 2
    keep = args[args.index("--keep") + 1] if "--keep" in args else None
    database = args[args.index("--database") + 1] if "--database" in args else ":memory:"
    total_start = time.perf_counter()
    base = os.path.dirname(os.path.abspath(config_path))
    with open(config_path) as handle:
        config = yaml.safe_load(handle)
    rules = json.load(open(rules_path))
    roots = []
    for trusted in config.get("trust") or []:
        with open(trusted if os.path.isabs(trusted) else os.path.join(base, trusted), "rb") as handle:
            roots.append(handle.read())
    apps = {a["bundle_id"]: {"environments": list(a.get("environments") or ["Production"]),
                             "app_apple_id": a.get("app_apple_id")} for a in config.get("apps") or []}
    work = keep or tempfile.mkdtemp(prefix="iapguard-peer-")
    os.makedirs(work, exist_ok=True)
    # One empty file of each kind, so that a config without JSON Lines sources still loads empty tables.
    for name in ("sightings-empty.jsonl", "notifications-empty.jsonl"):
        open(os.path.join(work, name), "wb").close()
    tasks, others = [], []
    for source in config.get("sources") or []:
        files = source_files(base, source["path"])
        if source["kind"] in ("receipts", "signed-transactions", "notifications"):
            if source.get("format", "jsonl") != "jsonl":
                sys.exit(f"peer_pipeline.py: source {source['name']}: only JSON Lines is read for {source['kind']}")
            for path in files:
                for start, end in ranges(path, workers):
                    tasks.append((source["kind"], source["name"], path, start, end, work, len(tasks)))
        else:
            others.append((source["kind"], files))

    # Decode + verify on `workers` processes.
    pass_start = time.perf_counter()
    with multiprocessing.Pool(workers, initializer=init_worker, initargs=(roots, apps)) as pool:
        results = pool.map(decode_range, tasks, chunksize=1)
    pass_seconds = time.perf_counter() - pass_start
    decode_seconds = sum(r["decode_seconds"] for r in results)
    verify_seconds = sum(r["verify_seconds"] for r in results)
    records, outcomes, errors = {}, {}, []
    for r in results:
        records[r["source"]] = records.get(r["source"], 0) + r["records"]
        for key, count in r["outcomes"].items():
            outcomes[key] = outcomes.get(key, 0) + count
        errors += r["errors"]
    worker_rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss

    load_start = time.perf_counter()
    if database != ":memory:" and os.path.exists(database):
        os.remove(database)
    con = duckdb.connect(database)
    con.execute(f"SET threads = {workers}")
    counts = load(con, config, base, work, others)
    load_seconds = time.perf_counter() - load_start

    rule_rows = []
    rules_start = time.perf_counter()
    for rule in rules:
        start = time.perf_counter()
        try:
            rows = len(con.execute(bind(rule["sql"], rule["params"])).fetchall())
            rule_rows.append({"id": rule["id"], "rows": rows, "seconds": time.perf_counter() - start})
        except Exception as error:  # noqa: BLE001 — report whatever DuckDB says
            rule_rows.append({"id": rule["id"], "error": str(error).splitlines()[0][:200]})
    rules_seconds = time.perf_counter() - rules_start
    con.close()
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - total_start
    print(json.dumps({
        "workers": workers,
        "seconds": {"decode": decode_seconds / workers, "verify": verify_seconds / workers,
                    "decode_verify_wall": pass_seconds, "load": load_seconds, "rules": rules_seconds,
                    "total": total},
        "records": {"decoded": records, "loaded": counts},
        "verification": dict(sorted(outcomes.items())),
        "decode_errors": len(errors), "decode_error_examples": errors[:5],
        "rules": rule_rows,
        "peak_rss_kib": {"main": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "largest_worker": worker_rss},
    }), flush=True)


if __name__ == "__main__":
    main()
