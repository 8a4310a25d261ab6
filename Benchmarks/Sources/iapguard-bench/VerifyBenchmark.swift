import Crypto
import Dispatch
import Foundation
import IAPGuard
import IAPGuardTesting
import X509

/// Throughput of JWS verification against the floor of one bare ES256 verify.
enum VerifyBenchmark {
    /// How long each figure is measured.
    nonisolated(unsafe) static var duration: TimeInterval = 3

    static func run(_ options: BenchOptions) throws {
        duration = options.seconds
        let cores = ProcessInfo.processInfo.activeProcessorCount
        Measure.header("verify", "ES256 floor vs JWSVerifier, \(duration) s per figure")

        // An Apple-shaped chain (P-384 root and intermediate, P-256 leaf) and 2,000 distinct transactions.
        let chain = try TestSigningChain.generate(options: .init(rootCurve: .p384, deterministicSeed: 1))
        let signedDate: Int64 = 1_717_200_000_000
        var payloads: [CompactJWS] = []
        for index in 0..<2_000 {
            let json = """
                {"transactionId":"\(2_000_000_000_000_000 + index)","originalTransactionId":"\(2_000_000_000_000_000 + index)",\
                "bundleId":"com.example.coins","productId":"com.example.coins.pack1","environment":"Production",\
                "type":"Consumable","quantity":1,"price":990,"currency":"USD","storefront":"USA",\
                "purchaseDate":\(signedDate - 5_000),"signedDate":\(signedDate)}
                """
            payloads.append(try CompactJWS(chain.sign(payload: Data(json.utf8))))
        }
        let policy = VerificationPolicy(apps: [.init(bundleID: "com.example.coins", environments: [.production])])
        let roots = [chain.rootDER]

        // 1. Bare ES256: swift-crypto P256 verify of the same signing inputs, one core.
        let leafKey = try leafPublicKey(chain.leafDER)
        let prepared = try payloads.map {
            (try P256.Signing.ECDSASignature(rawRepresentation: $0.signature), $0.signingInput)
        }
        var sink = 0
        let bare = measure { iteration in
            let (signature, input) = prepared[iteration % prepared.count]
            if leafKey.isValidSignature(signature, for: input) { sink &+= 1 }
        }
        report("bare ES256 verify (swift-crypto P256), 1 core", bare, floor: bare)
        let preparedBox = Prepared(items: prepared, key: leafKey)
        let bare2 = measureThreads(threads: cores) { thread, iteration in
            let (signature, input) = preparedBox.items[(iteration + thread * 977) % preparedBox.items.count]
            return preparedBox.key.isValidSignature(signature, for: input)
        }
        report("bare ES256 verify, \(cores) threads (the \(cores)-core floor)", bare2, floor: bare)

        // 2. JWSVerifier.verify on a cached chain, one core.
        let verifier = try JWSVerifier(trustedRootsDER: roots, policy: policy)
        guard verifier.verify(payloads[0], as: .transaction) == .verified else {
            throw BenchError("warm-up payload did not verify")
        }
        let cached = measure { iteration in
            if verifier.verify(payloads[iteration % payloads.count], as: .transaction).status == .verified {
                sink &+= 1
            }
        }
        report("JWSVerifier.verify, cached chain, 1 core", cached, floor: bare)

        // 3. Parse the compact text too (what a caller with raw lines pays), one core.
        let texts = payloads.map(\.compact)
        let parsed = measure { iteration in
            if let jws = try? CompactJWS(texts[iteration % texts.count]),
                verifier.verify(jws, as: .transaction).status == .verified
            {
                sink &+= 1
            }
        }
        report("CompactJWS parse + verify, cached chain, 1 core", parsed, floor: bare)

        // 4. verifyAll on all cores, cached chain.
        let batch = payloads.map { ($0, SignedPayloadKind.transaction) }
        let all = measureBatches(batchSize: batch.count) {
            sink &+= verifier.verifyAll(batch).count
        }
        report("JWSVerifier.verifyAll, cached chain, \(cores) cores", all, floor: bare)
        report(
            "JWSVerifier.verifyAll, cached chain, \(cores) cores, vs \(cores)-core floor", all, floor: bare2,
            of: "floor")

        // 5. Uncached: a fresh verifier per payload (root parse + chain validation + one ES256).
        let uncached = measure { iteration in
            if let fresh = try? JWSVerifier(trustedRootsDER: roots, policy: policy),
                fresh.verify(payloads[iteration % payloads.count], as: .transaction).status == .verified
            {
                sink &+= 1
            }
        }
        report("uncached chain validation (fresh verifier + verify), 1 core", uncached, floor: bare)

        if sink == 0 { print("(no verification succeeded)") }
        try worldPayloads(options, floor: bare, floor2: bare2)
        Measure.line("verify", "peak RSS of this stage", Measure.mib(Measure.peakRSS()))
    }

    /// The generator's real signed transactions, verified against the world's config (its test root).
    static func worldPayloads(_ options: BenchOptions, floor: Rate, floor2: Rate) throws {
        let config = try BenchWorld.config(options)
        let verifier = try JWSVerifier.make(for: config)
        var texts: [String] = []
        struct Done: Error {}
        do {
            try LineReader(url: options.worldDirectory.appendingPathComponent("data/transactions.jsonl")).forEachLine {
                line in
                guard case .text(_, let bytes) = line,
                    let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
                    let jws = object["signedTransactionInfo"] as? String
                else { return }
                texts.append(jws)
                if texts.count >= 20_000 { throw Done() }
            }
        } catch is Done {}
        guard !texts.isEmpty else {
            print("verify  (the world has no signed transactions)")
            return
        }
        let payloads = texts.compactMap { try? CompactJWS($0) }
        var verified = 0
        for jws in payloads where verifier.verify(jws, as: .transaction) == .verified { verified += 1 }
        print("verify  world payloads: \(payloads.count) signed transactions, \(verified) verify (forged ones fail)")
        let one = measure { iteration in
            _ = verifier.verify(payloads[iteration % payloads.count], as: .transaction)
        }
        report("world JWS: JWSVerifier.verify, cached chains, 1 core", one, floor: floor)
        let batch = payloads.map { ($0, SignedPayloadKind.transaction) }
        let all = measureBatches(batchSize: batch.count) { _ = verifier.verifyAll(batch) }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        report(
            "world JWS: JWSVerifier.verifyAll, \(cores) cores, vs \(cores)-core floor", all, floor: floor2, of: "floor")
        let parsed = measure { iteration in
            if let jws = try? CompactJWS(texts[iteration % texts.count]) {
                _ = verifier.verify(jws, as: .transaction)
            }
        }
        report("world JWS: CompactJWS parse + verify, 1 core", parsed, floor: floor)
    }

    /// The bare-verify inputs, shared read-only by the threads.
    struct Prepared: @unchecked Sendable {
        var items: [(P256.Signing.ECDSASignature, Data)]
        var key: P256.Signing.PublicKey
    }

    /// Runs `body(thread, iteration)` on `threads` threads for `duration` seconds; counts all calls.
    static func measureThreads(threads: Int, _ body: @escaping @Sendable (Int, Int) -> Bool) -> Rate {
        let counts = Counts(threads: threads)
        let seconds = Measure.parallel(threads: threads) { thread in
            let end = DispatchTime.now().uptimeNanoseconds + UInt64(duration * 1e9)
            var iteration = 0
            while DispatchTime.now().uptimeNanoseconds < end {
                for _ in 0..<50 {
                    _ = body(thread, iteration)
                    iteration += 1
                }
            }
            counts.set(thread, iteration)
        }
        return Rate(operations: counts.total, seconds: seconds)
    }

    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Int]
        init(threads: Int) { values = Array(repeating: 0, count: threads) }
        func set(_ index: Int, _ value: Int) {
            lock.lock()
            values[index] = value
            lock.unlock()
        }
        var total: Int {
            lock.lock()
            defer { lock.unlock() }
            return values.reduce(0, +)
        }
    }

    struct Rate {
        var operations: Int
        var seconds: Double
        var perSecond: Double { Double(operations) / seconds }
    }

    /// Calls `body` with 0, 1, 2… for `duration` seconds.
    static func measure(_ body: (Int) -> Void) -> Rate {
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(duration * 1e9)
        var iteration = 0
        var now = start
        while now < end {
            for _ in 0..<50 {
                body(iteration)
                iteration += 1
            }
            now = DispatchTime.now().uptimeNanoseconds
        }
        return Rate(operations: iteration, seconds: Double(now - start) / 1e9)
    }

    /// Calls `body` (which processes `batchSize` items) repeatedly for `duration` seconds.
    static func measureBatches(batchSize: Int, _ body: () -> Void) -> Rate {
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(duration * 1e9)
        var batches = 0
        var now = start
        while now < end {
            body()
            batches += 1
            now = DispatchTime.now().uptimeNanoseconds
        }
        return Rate(operations: batches * batchSize, seconds: Double(now - start) / 1e9)
    }

    static func report(_ name: String, _ rate: Rate, floor: Rate, of floorName: String = "bare 1-core") {
        let perSecond = String(format: "%9.0f /s  %6.1f µs/op", rate.perSecond, 1e6 / rate.perSecond)
        Measure.line("verify", name, "\(perSecond)  \(Measure.ratio(rate.perSecond, floor.perSecond)) of \(floorName)")
    }

    static func leafPublicKey(_ der: Data) throws -> P256.Signing.PublicKey {
        guard let key = P256.Signing.PublicKey(try Certificate(derEncoded: Array(der)).publicKey) else {
            throw BenchError("leaf key is not P-256")
        }
        return key
    }
}
