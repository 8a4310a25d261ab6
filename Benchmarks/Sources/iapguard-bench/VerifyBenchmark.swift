import Crypto
import Dispatch
import Foundation
import IAPGuard
import X509

/// Throughput of JWS verification against the floor of one bare ES256 verify.
enum VerifyBenchmark {
    /// How long each figure is measured.
    static let duration: TimeInterval = 3

    static func run() throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        print("iapguard-bench verify — \(cores) cores, \(Int(duration)) s per figure")

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

        // 2. JWSVerifier.verify on a cached chain, one core.
        let verifier = try JWSVerifier(trustedRootsDER: roots, policy: policy)
        guard verifier.verify(payloads[0], as: .transaction) == .verified else {
            throw BenchError(message: "warm-up payload did not verify")
        }
        let cached = measure { iteration in
            if verifier.verify(payloads[iteration % payloads.count], as: .transaction).status == .verified { sink &+= 1 }
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

    static func report(_ name: String, _ rate: Rate, floor: Rate) {
        let perSecond = String(format: "%10.0f", rate.perSecond)
        let ratio = String(format: "%.2f", rate.perSecond / floor.perSecond)
        print("\(perSecond) /s  ×\(ratio) of bare  \(name)")
    }

    static func leafPublicKey(_ der: Data) throws -> P256.Signing.PublicKey {
        guard let key = P256.Signing.PublicKey(try Certificate(derEncoded: Array(der)).publicKey) else {
            throw BenchError(message: "leaf key is not P-256")
        }
        return key
    }

    struct BenchError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
