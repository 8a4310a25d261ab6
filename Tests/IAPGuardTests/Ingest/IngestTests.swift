import Foundation
import Testing

@testable import IAPGuard

@Suite struct IngestTests {
    @Test func everyInAppEntryOfAVerifyReceiptResponseBecomesANotSignedTransaction() throws {
        let world = try IngestTestWorld()
        try world.copyFixture("ingest/receipts.jsonl", as: "receipts.jsonl")
        let config = try world.config(sources: ["{name: r, kind: receipts, path: data/receipts.jsonl}"])
        let summary = try world.run(config)
        #expect(summary.sources[0].counts.errors == 0)
        let rows = try world.rows(
            config,
            "SELECT transaction_id, product_id, purchase_date, environment, verification FROM transactions ORDER BY transaction_id"
        )
        #expect(rows.count == 3)
        #expect(
            rows[0] == ["1000000276891381", "com.example.coins.pack1", "1488002375000", "Production", "not-signed"])
        #expect(
            rows[1] == ["1000000703242829", "com.example.coins.pack6", "1596771003000", "Production", "not-signed"])
        let submitted = try world.rows(
            config,
            "SELECT submitted_by_user_id, submitted_order_id, receipt_status FROM sightings WHERE transaction_id = '1000000703242829'"
        )
        #expect(submitted == [["u-1", "o-1", "0"]])
    }

    @Test func forgedLegacyEntriesCarryTheirAnomalies() throws {
        let world = try IngestTestWorld()
        try world.copyFixture("ingest/receipts.jsonl", as: "receipts.jsonl")
        let config = try world.config(sources: ["{name: r, kind: receipts, path: data/receipts.jsonl}"])
        _ = try world.run(config)
        let anomalies = try world.rows(
            config, "SELECT anomalies FROM sightings WHERE transaction_id = 'com.urus.iap.8812'")
        let flags = Set((anomalies.first?.first ?? nil)?.split(separator: ",").map(String.init) ?? [])
        #expect(flags == ["date-mismatch", "expiry-far-future", "product-outside-bundle", "non-numeric-id"])
    }

    @Test func ingestingTheSameInputTwiceChangesNothing() throws {
        let world = try IngestTestWorld()
        try world.copyFixture("ingest/receipts.jsonl", as: "receipts.jsonl")
        try world.copyFixture("ingest/orders.csv", as: "orders.csv")
        try world.copyFixture("ingest/credits.jsonl", as: "credits.jsonl")
        let sources = [
            "{name: r, kind: receipts, path: data/receipts.jsonl}",
            "{name: o, kind: orders, format: csv, path: data/orders.csv}",
            "{name: c, kind: credits, path: data/credits.jsonl}",
        ]
        let config = try world.config(sources: sources)
        _ = try world.run(config)
        let first = try world.fingerprint(config)
        // Forget the file states so the second run really re-reads every record.
        try world.store(config).database.execute("DELETE FROM file_state")
        let second = try world.run(config)
        #expect(try world.fingerprint(config) == first)
        #expect(second.sources.allSatisfy { $0.counts.inserted == 0 && $0.counts.updated == 0 })
        let third = try world.run(config)
        #expect(third.sources.allSatisfy { $0.counts.filesSkipped == 1 })
    }

    /// An analyst's edit of what the rules read leaves the next run skipping the unchanged input files; an
    /// edit of what ingest reads (an app's environments) makes it read them again.
    @Test func onlyAConfigEditThatIngestReadsMakesTheNextRunReadUnchangedFilesAgain() throws {
        let world = try IngestTestWorld()
        try world.copyFixture("ingest/receipts.jsonl", as: "receipts.jsonl")
        try world.copyFixture("ingest/orders.csv", as: "orders.csv")
        let sources = [
            "{name: r, kind: receipts, path: data/receipts.jsonl}",
            "{name: o, kind: orders, format: csv, path: data/orders.csv}",
        ]
        let config = try world.config(sources: sources)
        _ = try world.run(config)
        let text = try String(contentsOf: config.file, encoding: .utf8)
        let edited =
            text.replacingOccurrences(of: "price: \"4.99\"", with: "price: \"5.99\"")
            + "\nrule_params: {IAP-014: {grace_hours: 48}}\ntesters: [u-9]\n"
        try edited.write(to: config.file, atomically: true, encoding: .utf8)
        let tuned = try Config.load(from: config.file)
        #expect(tuned.hash != config.hash)
        let second = try world.run(tuned)
        #expect(second.sources.allSatisfy { $0.counts.filesSkipped == 1 && $0.counts.records == 0 })
        let narrowed = try world.config(sources: sources, environments: "[Production]")
        let third = try world.run(narrowed)
        #expect(third.sources.allSatisfy { $0.counts.filesSkipped == 0 && $0.counts.records > 0 })
    }

    @Test func aLaterRefundUpdatesTheOrderAndKeepsWhatChanged() throws {
        let world = try IngestTestWorld()
        try world.write(
            "credits.jsonl",
            #"{"credit_id":"c-9","transaction_id":"1","user_id":"u-1","units":100,"credited_at":1000}"# + "\n")
        let config = try world.config(sources: ["{name: c, kind: credits, path: data/credits.jsonl}"])
        _ = try world.run(config)
        try world.write(
            "credits.jsonl",
            #"{"credit_id":"c-9","transaction_id":"1","user_id":"u-1","units":100,"credited_at":1000,"reversed_at":"1970-01-01T00:00:05Z","reversal_reason":"refund"}"#
                + "\n")
        let summary = try world.run(config)
        #expect(summary.sources[0].counts.updated == 1)
        #expect(try world.rows(config, "SELECT reversed_at, reversal_reason FROM credits") == [["5000", "refund"]])
        let changes = try world.rows(config, "SELECT field, old_value, new_value FROM change_log ORDER BY field")
        #expect(changes == [["reversal_reason", nil, "refund"], ["reversed_at", nil, "5000"]])
    }

    @Test func aConflictingCopyOfATransactionIsKeptAsItsOwnSighting() throws {
        let world = try IngestTestWorld()
        let genuine =
            #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.coins","in_app":[{"quantity":"1","product_id":"com.example.coins.pack6","transaction_id":"42","purchase_date_ms":"1000"}]}}"#
        let forged =
            #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.coins","in_app":[{"quantity":"9","product_id":"com.example.coins.pack6","transaction_id":"42","purchase_date_ms":"1000"}]}}"#
        try world.write("r.jsonl", genuine + "\n" + forged + "\n")
        let config = try world.config(sources: ["{name: r, kind: receipts, path: data/r.jsonl}"])
        _ = try world.run(config)
        #expect(try world.rows(config, "SELECT COUNT(*) FROM sightings WHERE transaction_id = '42'") == [["2"]])
        #expect(
            try world.rows(config, "SELECT quantity, sighting_count, conflict_count FROM transactions") == [
                ["1", "2", "1"]
            ])
    }

    @Test func ordersFromCSVAreParsedWithQuotesAndBadRowsAreQuarantinedByLine() throws {
        let world = try IngestTestWorld()
        try world.copyFixture("ingest/orders.csv", as: "orders.csv")
        let config = try world.config(sources: ["{name: o, kind: orders, format: csv, path: data/orders.csv}"])
        let summary = try world.run(config)
        // A quarantined record is an error, not an inserted record (records = inserted + … + errors).
        #expect(summary.sources[0].counts.inserted == 2)
        #expect(summary.sources[0].counts.errors == 2)
        #expect(summary.sources[0].counts.records == 4)
        #expect(
            try world.rows(
                config, "SELECT order_id, price, created_at, app_account_token FROM orders ORDER BY order_id") == [
                    ["o-1", "4990", "1596770940000", nil],
                    ["o-2", "990", "1488002370000", "7e3fb20b-4cdb-47cc-936d-99d65f608138"],
                ])
        let quarantine = try world.rows(config, "SELECT location, reason FROM quarantine ORDER BY location")
        #expect(quarantine[0][0] == "orders.csv:4")
        #expect(quarantine[0][1]?.contains("price") == true)
        #expect(quarantine[1] == ["orders.csv:5", "expected 13 fields as in the header, found 3"])
    }

    @Test func aCSVWithoutItsKeyColumnFailsThatSourceAndTheOthersStillRun() throws {
        let world = try IngestTestWorld()
        try world.write("orders.csv", "user_id,product_id\nu-1,p\n")
        try world.copyFixture("ingest/credits.jsonl", as: "credits.jsonl")
        let config = try world.config(sources: [
            "{name: o, kind: orders, format: csv, path: data/orders.csv}",
            // Two of its three records are bad: without the limit lifted, that source would be in error too.
            "{name: c, kind: credits, path: data/credits.jsonl, max_bad_share: 1}",
        ])
        let summary = try world.run(config)
        #expect(summary.errors.count == 1)
        #expect(summary.errors[0].contains("orders.csv:1: the header has no order_id column"))
        #expect(summary.sources[1].counts.inserted == 1 && summary.sources[1].counts.errors == 2)
    }

    @Test func malformedRecordsAreQuarantinedWithFileLineAndReasonAndTheRestIsIngested() throws {
        let world = try IngestTestWorld()
        let good = #"{"credit_id":"c-ok","user_id":"u-1","units":1,"credited_at":1767225600000}"#
        var bytes = Array("\(good)\n{\"credit_id\": \n\"just a string\"\n".utf8)
        bytes += [0x7B, 0x22, 0x63, 0xFF, 0xFE, 0x22, 0x7D, 0x0A]  // invalid UTF-8
        bytes += Array(#"{"credit_id":"c-x","user_id":"u-1","units":"many","credited_at":1767225600000}"#.utf8) + [0x0A]
        bytes += Array(repeating: UInt8(ascii: "x"), count: 10 << 20) + [0x0A]  // a 10 MB line
        bytes += Array(#"{"credit_id":"c-last","user_id":"u-2","units":2,"credited_at":1767225601000}"#.utf8) + [0x0A]
        try world.write("credits.jsonl", bytes: bytes)
        try world.write("empty.jsonl", "")
        try world.write("tx.jsonl", "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiMSJ9\neyJhbGciOiJFUzI1NiJ9.!!!.abc\n")
        let config = try world.config(sources: [
            "{name: c, kind: credits, path: data/credits.jsonl}",
            "{name: e, kind: receipts, path: data/empty.jsonl}",
            "{name: t, kind: signed-transactions, path: data/tx.jsonl}",
        ])
        let summary = try world.run(config)
        // The good records are stored, and a source that is mostly (or only) bad records is in error.
        #expect(summary.errors.count == 2, "\(summary.errors)")
        #expect(
            summary.errors.first?.hasPrefix(
                "source c: 5 of 7 records (71 %) were quarantined, above the 50 % limit (max_bad_share)") == true)
        #expect(summary.errors.first?.contains("source c: degraded source: no record has transaction_id") == true)
        #expect(summary.errors.last?.hasPrefix("source t: no good record: all 2 records were quarantined") == true)
        #expect(summary.warnings == ["source e: delivered 0 records (empty file: empty.jsonl)"])
        #expect(try world.rows(config, "SELECT credit_id FROM credits ORDER BY credit_id") == [["c-last"], ["c-ok"]])
        let quarantine = try world.rows(
            config, "SELECT location, reason FROM quarantine ORDER BY source_name, location")
        let reasons = Dictionary(uniqueKeysWithValues: quarantine.map { ($0[0] ?? "", $0[1] ?? "") })
        #expect(reasons["credits.jsonl:2"]?.contains("malformed JSON") == true)
        #expect(reasons["credits.jsonl:3"]?.contains("expected a JSON object, found text") == true)
        #expect(reasons["credits.jsonl:4"] == "invalid UTF-8")
        #expect(reasons["credits.jsonl:5"] == "units: expected a whole number, found \"many\"")
        #expect(reasons["credits.jsonl:6"]?.contains("longer than the 8 MiB limit") == true)
        #expect(reasons["tx.jsonl:1"]?.contains("bad-format: compact JWS needs 3") == true)
        #expect(reasons["tx.jsonl:2"]?.contains("bad-format") == true)
        #expect(summary.sources[1].counts.records == 0)
    }

    @Test func appleSampleNotificationIsStoredWithItsClaims() throws {
        let world = try IngestTestWorld()
        let payload = try String(contentsOf: Fixtures.local("apple/signed/testNotification"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try world.write("n.jsonl", "{\"signedPayload\":\"\(payload)\"}\n")
        let config = try world.config(sources: ["{name: n, kind: notifications, path: data/n.jsonl}"])
        _ = try world.run(config)
        #expect(
            try world.rows(
                config,
                "SELECT notification_type, bundle_id, app_apple_id, environment, verification FROM notifications")
                == [["TEST", "com.example", "1234", "Sandbox", "unverified"]])
    }

    @Test func appleSampleModelsMapOntoTheContract() throws {
        let data = try Data(contentsOf: Fixtures.local("apple/models/signedTransactionWithRevocation.json"))
        let t = try SignedTransactionParser.transaction(from: JSONObject.parse(Array(data)))
        #expect(t.transactionID == "23456")
        #expect(t.originalTransactionID == "12345")
        #expect(t.price == 10990)
        #expect(t.currency == "USD")
        #expect(t.storefront == "USA")
        #expect(t.revocationType == "REFUND_PRORATED")
        #expect(t.revocationPercentage == 50000)
        #expect(t.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }
}
