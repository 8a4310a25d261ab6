import Crypto
import Foundation
import Testing
import X509

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// A small world generated once per test process (200 users, 10 days), plus a second copy with the same
/// seed for determinism checks.
enum SmallWorld {
    static let options = WorldGenerator.Options(seed: 7, users: 200, days: 10, end: WorldGenerator.defaultEnd)

    static func make(_ name: String, seed: UInt64 = 7) throws -> (URL, WorldSummary) {
        let dir = TestScratch.root
            .appendingPathComponent("iapguard-world-\(name)-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: dir)
        var o = options
        o.seed = seed
        let summary = try WorldGenerator(options: o).write(to: dir)
        return (dir, summary)
    }

    static let first: Result<(URL, WorldSummary), any Error> = Result { try make("a") }
    static let second: Result<(URL, WorldSummary), any Error> = Result { try make("b") }

    static func lines(_ dir: URL, _ path: String) throws -> [String] {
        try String(contentsOf: dir.appendingPathComponent(path), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func truth(_ dir: URL) throws -> [[String: Any]] {
        try lines(dir, "truth.jsonl").map { try object($0) }
    }
}

@Suite struct WorldGeneratorTests {
    // MARK: determinism

    @Test func sameSeedWritesIdenticalBackendReceiptAndTruthFiles() throws {
        let (a, _) = try SmallWorld.first.get()
        let (b, _) = try SmallWorld.second.get()
        for path in [
            "data/orders.csv", "data/credits.jsonl", "data/receipts.jsonl", "truth.jsonl", "data/fx-rates.csv",
        ] {
            let x = try Data(contentsOf: a.appendingPathComponent(path))
            let y = try Data(contentsOf: b.appendingPathComponent(path))
            #expect(x == y, "\(path) differs between two runs with the same seed")
            #expect(!x.isEmpty)
        }
    }

    @Test func sameSeedWritesIdenticalSignedPayloadsOnceDecoded() throws {
        let (a, _) = try SmallWorld.first.get()
        let (b, _) = try SmallWorld.second.get()
        for path in ["data/transactions.jsonl", "data/notifications.jsonl"] {
            let x = try SmallWorld.lines(a, path).map(Self.decodedForm)
            let y = try SmallWorld.lines(b, path).map(Self.decodedForm)
            #expect(x.count == y.count)
            #expect(x == y, "\(path) payloads differ between two runs with the same seed")
        }
    }

    @Test func differentSeedWritesADifferentWorld() throws {
        let (a, _) = try SmallWorld.first.get()
        let (c, _) = try SmallWorld.make("c", seed: 8)
        defer { try? FileManager.default.removeItem(at: c) }
        let x = try Data(contentsOf: a.appendingPathComponent("data/orders.csv"))
        let y = try Data(contentsOf: c.appendingPathComponent("data/orders.csv"))
        #expect(x != y)
    }

    /// A line with every JWS replaced by its decoded payload (recursively for nested JWS), signatures dropped.
    static func decodedForm(_ line: String) throws -> String {
        let object = try SmallWorld.object(line)
        return try canonical(object)
    }

    static func canonical(_ value: Any) throws -> String {
        if let dict = value as? [String: Any] {
            var parts: [String] = []
            for key in dict.keys.sorted() {
                var v = dict[key] as Any
                if ["signedTransactionInfo", "signedPayload", "signedRenewalInfo"].contains(key), let s = v as? String {
                    let jws = try CompactJWS(s)
                    v = try JSONSerialization.jsonObject(with: jws.payloadJSON)
                }
                parts.append(key + "=" + (try canonical(v)))
            }
            return "{" + parts.joined(separator: ",") + "}"
        }
        if let array = value as? [Any] { return "[" + (try array.map(canonical)).joined(separator: ",") + "]" }
        return String(describing: value)
    }

    // MARK: truth coverage

    @Test func everyRuleHasAtLeastThreeInjectedHits() throws {
        let (dir, summary) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        for n in 1...22 {
            let rule = "IAP-" + (n < 10 ? "00" : "0") + String(n)
            let hits = truth.filter {
                $0["rule_id"] as? String == rule && $0["expect"] as? String == "hit" && $0["primary"] as? Bool == true
            }
            #expect(hits.count >= 3, "\(rule) has \(hits.count) injected hits")
            #expect((summary.truthByRule[rule + " hit"] ?? 0) >= 3)
        }
    }

    @Test func benignLookAlikesAreLabelledNoHitForTheRuleTheyResemble() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        let expected: [(String, String)] = [
            ("family-sharing", "IAP-002"), ("family-sharing", "IAP-013"), ("subscription-renewals", "IAP-002"),
            ("tester-sandbox", "IAP-017"), ("traveller", "IAP-008"), ("moved-country", "IAP-009"),
            ("refund-clawed-back", "IAP-015"), ("rolled-back-retry", "IAP-001"), ("restore-new-device", "IAP-002"),
            ("grace-period-pending", "IAP-014"), ("refund-reversed", "IAP-015"), ("native-cheap-storefront", "IAP-008"),
        ]
        for (pattern, rule) in expected {
            let lines = truth.filter { $0["pattern"] as? String == pattern && $0["rule_id"] as? String == rule }
            #expect(!lines.isEmpty, "no \(pattern) look-alike for \(rule)")
            #expect(lines.allSatisfy { $0["expect"] as? String == "no-hit" })
        }
    }

    @Test func blockedForgeriesAreExpectedAsInformationalAndCreditedOnesAsCritical() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir).filter { $0["rule_id"] as? String == "IAP-020" }
        let blocked = truth.filter { $0["pattern"] as? String == "forged-jws-blocked" }
        #expect(!blocked.isEmpty)
        #expect(blocked.allSatisfy { $0["expect"] as? String == "hit" && $0["level"] as? String == "informational" })
        let levels = Set(
            truth.filter { $0["pattern"] as? String == "unconfirmed-credit" }.compactMap { $0["level"] as? String })
        #expect(levels == ["high", "critical"])
    }

    @Test func rolledBackDuplicateCreditCarriesReversalAndRollbackReason() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        let credits = try SmallWorld.lines(dir, "data/credits.jsonl").map { try SmallWorld.object($0) }
        for line in truth where line["pattern"] as? String == "rolled-back-retry" {
            let tx = try #require(line["transaction_id"] as? String)
            let forTx = credits.filter { $0["transaction_id"] as? String == tx }
            #expect(forTx.count == 2)
            #expect(
                forTx.filter { $0["reversal_reason"] as? String == "rollback" && $0["reversed_at"] is NSNumber }.count
                    == 1)
        }
    }

    @Test func missingAndPendingCreditsHaveNoCreditAndPendingOnesAreInsideTheGracePeriod() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        let credited = Set(
            try SmallWorld.lines(dir, "data/credits.jsonl").compactMap {
                try SmallWorld.object($0)["transaction_id"] as? String
            })
        let payloads = try Self.transactionPayloads(dir)
        for line in truth where ["missing-credit", "grace-period-pending"].contains(line["pattern"] as? String ?? "") {
            let tx = try #require(line["transaction_id"] as? String)
            #expect(!credited.contains(tx))
            let purchase = try #require(payloads[tx]?["purchaseDate"] as? Int64)
            let age = SmallWorld.options.end - purchase
            if line["pattern"] as? String == "grace-period-pending" {
                #expect(age < 24 * 3_600_000)
            } else {
                #expect(age > 48 * 3_600_000)
            }
        }
    }

    @Test func unconfirmedGhostCreditsHaveNoAppleSighting() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        let receipts = try String(contentsOf: dir.appendingPathComponent("data/receipts.jsonl"), encoding: .utf8)
        let signed = try Self.transactionPayloads(dir)
        let ghosts = truth.filter { ($0["note"] as? String) == "no Apple sighting at all" }
        #expect(ghosts.count >= 3)
        for ghost in ghosts {
            let tx = try #require(ghost["transaction_id"] as? String)
            #expect(!receipts.contains(tx))
            #expect(signed[tx] == nil)
        }
    }

    @Test func arbitrageIsPricedBelowHalfTheReferenceAndTravellersAreNot() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        let payloads = try Self.transactionPayloads(dir)
        var checked = 0
        for line in truth {
            guard let pattern = line["pattern"] as? String,
                ["currency-arbitrage", "traveller"].contains(pattern),
                let tx = line["transaction_id"] as? String, let p = payloads[tx]
            else { continue }
            let price = try #require(p["price"] as? Int64)
            let currency = try #require(p["currency"] as? String)
            let purchase = try #require(p["purchaseDate"] as? Int64)
            let product = try #require(
                WorldCatalog.configuredProducts.first { $0.productID == p["productId"] as? String })
            let usd = try #require(
                SyntheticFXRates.convert(milli: price, from: currency, to: "USD", day: WorldTime.dayNumber(purchase)))
            let ratio = usd / Double(product.referencePriceMilli)
            if pattern == "currency-arbitrage" {
                #expect(ratio < 0.5, "\(tx) ratio \(ratio)")
            } else {
                #expect(ratio >= 0.5, "\(tx) ratio \(ratio)")
            }
            checked += 1
        }
        #expect(checked >= 6)
    }

    /// transaction id → decoded payload, from transactions.jsonl.
    static func transactionPayloads(_ dir: URL) throws -> [String: [String: Any]] {
        var out: [String: [String: Any]] = [:]
        for line in try SmallWorld.lines(dir, "data/transactions.jsonl") {
            let jws = try CompactJWS(try #require(try SmallWorld.object(line)["signedTransactionInfo"] as? String))
            let payload = try #require(try JSONSerialization.jsonObject(with: jws.payloadJSON) as? [String: Any])
            if let id = payload["transactionId"] as? String { out[id] = payload }
        }
        return out
    }

    // MARK: formats

    @Test func everyJWSHasThreeCertificatesAndAnES256SignatureThatVerifiesWithTheLeafKey() throws {
        let (dir, _) = try SmallWorld.first.get()
        let trustedRoot = try Data(contentsOf: dir.appendingPathComponent("certs/test-root.der"))
        let untrustedRoot = try Data(contentsOf: dir.appendingPathComponent("certs/untrusted-root.der"))
        var compacts: [String] = []
        for line in try SmallWorld.lines(dir, "data/transactions.jsonl") {
            compacts.append(try #require(try SmallWorld.object(line)["signedTransactionInfo"] as? String))
        }
        for line in try SmallWorld.lines(dir, "data/notifications.jsonl") {
            let outer = try #require(try SmallWorld.object(line)["signedPayload"] as? String)
            compacts.append(outer)
            let payload = try SmallWorld.object(String(decoding: try CompactJWS(outer).payloadJSON, as: UTF8.self))
            let data = try #require(payload["data"] as? [String: Any])
            compacts.append(try #require(data["signedTransactionInfo"] as? String))
            if let renewal = data["signedRenewalInfo"] as? String { compacts.append(renewal) }
        }
        #expect(compacts.count > 200)
        var foreign = 0
        for compact in compacts {
            let jws = try CompactJWS(compact)
            #expect(jws.algorithm == "ES256")
            #expect(jws.certificateChainDER.count == 3)
            #expect(jws.signature.count == 64)
            let leaf = try Certificate(derEncoded: Array(jws.certificateChainDER[0]))
            let key = try #require(P256.Signing.PublicKey(leaf.publicKey))
            let signature = try P256.Signing.ECDSASignature(rawRepresentation: jws.signature)
            #expect(key.isValidSignature(signature, for: jws.signingInput))
            let root = jws.certificateChainDER[2]
            #expect(root == trustedRoot || root == untrustedRoot)
            if root == untrustedRoot { foreign += 1 }
        }
        // Every unconfirmed-credit case, every blocked attempt and every LocalTesting purchase (signed on a
        // developer's Mac) carries one foreign-signed JWS.
        #expect(foreign == 7)
    }

    @Test func chainCertificatesCarryAppleMarkerOIDsAndCoverTheWindow() throws {
        let (dir, _) = try SmallWorld.first.get()
        let line = try #require(try SmallWorld.lines(dir, "data/transactions.jsonl").first)
        let jws = try CompactJWS(try #require(try SmallWorld.object(line)["signedTransactionInfo"] as? String))
        let leaf = try Certificate(derEncoded: Array(jws.certificateChainDER[0]))
        let intermediate = try Certificate(derEncoded: Array(jws.certificateChainDER[1]))
        #expect(leaf.extensions[oid: [1, 2, 840, 113635, 100, 6, 11, 1]] != nil)
        #expect(intermediate.extensions[oid: [1, 2, 840, 113635, 100, 6, 2, 1]] != nil)
        let start = Date(timeIntervalSince1970: Double(SmallWorld.options.start) / 1000)
        let end = Date(timeIntervalSince1970: Double(SmallWorld.options.end) / 1000)
        #expect(leaf.notValidBefore <= start && leaf.notValidAfter >= end)
        #expect(intermediate.issuer == (try Certificate(derEncoded: Array(jws.certificateChainDER[2]))).subject)
    }

    @Test func ordersCSVParsesAsRFC4180WithTheContractHeader() throws {
        let (dir, _) = try SmallWorld.first.get()
        let text = try String(contentsOf: dir.appendingPathComponent("data/orders.csv"), encoding: .utf8)
        let rows = try Self.parseCSV(text)
        let header = try #require(rows.first)
        #expect(header == WorldSink.orderColumns)
        #expect(rows.count > 100)
        let priceColumn = try #require(header.firstIndex(of: "price"))
        var orderIDs = Set<String>()
        for row in rows.dropFirst() {
            #expect(row.count == header.count)
            #expect(orderIDs.insert(row[0]).inserted, "duplicate order id \(row[0])")
            let price = row[priceColumn]
            #expect(price.allSatisfy { $0.isNumber || $0 == "." } && !price.isEmpty, "price \(price)")
        }
    }

    /// A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes.
    static func parseCSV(_ text: String) throws -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var chars = Array(text.unicodeScalars)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" {
                        field.unicodeScalars.append("\"")
                        chars.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.unicodeScalars.append(c)
                }
            } else if c == "\"" && field.isEmpty {
                quoted = true
            } else if c == "," {
                row.append(field)
                field = ""
            } else if c == "\r" {
                #expect(chars.popFirst() == "\n", "bare CR")
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                #expect(c != "\n", "bare LF")
                field.unicodeScalars.append(c)
            }
        }
        #expect(row.isEmpty && field.isEmpty, "last record not terminated by CRLF")
        return rows
    }

    @Test func legacyDateTextsMatchTheirMillisecondTwinsExceptForgedOnes() throws {
        let (dir, _) = try SmallWorld.first.get()
        let truth = try SmallWorld.truth(dir)
        let forged = Set(
            truth.filter { ($0["note"] as? String)?.hasPrefix("date-mismatch") == true }
                .compactMap { $0["transaction_id"] as? String })
        #expect(!forged.isEmpty)
        var mismatched = Set<String>()
        var statuses = Set<Int>()
        for line in try SmallWorld.lines(dir, "data/receipts.jsonl") {
            let response = try #require(try SmallWorld.object(line)["response"] as? [String: Any])
            statuses.insert(try #require(response["status"] as? Int))
            let receipt = response["receipt"] as? [String: Any]
            for entry in receipt?["in_app"] as? [[String: Any]] ?? [] {
                let text = try #require(entry["purchase_date"] as? String)
                let msText = try #require(entry["purchase_date_ms"] as? String)
                let ms = try #require(Int64(msText))
                let day = try #require(WorldTime.parseDate(String(text.prefix(10))))
                let parts = text.dropFirst(11).prefix(8).split(separator: ":").compactMap { Int64($0) }
                let fromText = day + parts[0] * 3_600_000 + parts[1] * 60_000 + parts[2] * 1000
                if abs(fromText - ms) > 1000 { mismatched.insert(try #require(entry["transaction_id"] as? String)) }
                #expect(entry["quantity"] is String)
            }
        }
        #expect(mismatched == forged)
        #expect(statuses.isSuperset(of: [0, 21007]))
    }

    @Test func configListsTheTestersAndTheWorldFiles() throws {
        let (dir, _) = try SmallWorld.first.get()
        let yaml = try String(contentsOf: dir.appendingPathComponent("iapguard.yml"), encoding: .utf8)
        let truth = try SmallWorld.truth(dir)
        let testers = Set(
            truth.filter { $0["pattern"] as? String == "tester-sandbox" }.compactMap { $0["user_id"] as? String })
        #expect(!testers.isEmpty)
        for tester in testers { #expect(yaml.contains(tester)) }
        for needle in [
            "trust: [certs/test-root.der]", "fx_rates: data/fx-rates.csv", "path: data/receipts.jsonl",
            "path: data/transactions.jsonl", "path: data/notifications.jsonl", "path: data/orders.csv",
            "path: data/credits.jsonl", "bundle_id: com.example.coins.plus",
        ] {
            #expect(yaml.contains(needle), "config lacks \(needle)")
        }
        #expect(!yaml.contains("com.example.cheapapp"))
        #expect(!yaml.contains("rules:"))
    }

    // MARK: FX

    @Test func shippedFXSnapshotIsTheGeneratorsTable() throws {
        let shipped = try String(
            contentsOf: Fixtures.repoRoot.appendingPathComponent("rules/fx-rates.csv"), encoding: .utf8)
        #expect(shipped == SyntheticFXRates.sampleSnapshotCSV)
        let (dir, _) = try SmallWorld.first.get()
        let world = try SmallWorld.lines(dir, "data/fx-rates.csv").dropFirst()
        let shippedRows = Set(shipped.split(separator: "\n").map(String.init))
        for row in world {
            #expect(shippedRows.contains(row), "world rate \(row) differs from the shipped snapshot")
            let day = try #require(WorldTime.parseDate(String(row.prefix(10))))
            #expect(WorldTime.weekday(day: WorldTime.dayNumber(day)) < 5)
        }
    }

    @Test func randomStreamsAreReproducibleAndIndependentPerIndex() {
        var a = WorldRandom(seed: 42, stream: 2, index: 5)
        var b = WorldRandom(seed: 42, stream: 2, index: 5)
        var c = WorldRandom(seed: 42, stream: 2, index: 6)
        let xa = (0..<8).map { _ in a.next() }
        #expect(xa == (0..<8).map { _ in b.next() })
        #expect(xa != (0..<8).map { _ in c.next() })
        var r = WorldRandom(seed: 1)
        for _ in 0..<1000 {
            let v = r.int(3...7)
            #expect((3...7).contains(v))
        }
    }

    @Test func decimalTextFollowsTheCurrencyDigits() {
        #expect(WorldCatalog.decimalText(milli: 990, minorDigits: 2) == "0.99")
        #expect(WorldCatalog.decimalText(milli: 150_000, minorDigits: 0) == "150")
        #expect(WorldCatalog.decimalText(milli: 299_000, minorDigits: 2) == "299.00")
        #expect(WorldCatalog.decimalText(milli: 1_599_990, minorDigits: 2) == "1599.99")
    }
}
