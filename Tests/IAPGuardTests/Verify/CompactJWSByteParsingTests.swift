import Foundation
import Testing

@testable import IAPGuard

/// The byte-level ``CompactJWS`` parse against the `String`/`JSONSerialization` implementation it replaced:
/// same acceptance, same fields, same error messages, on a corpus of valid and mutated inputs.
@Suite struct CompactJWSByteParsingTests {
    enum Outcome: Equatable {
        case success(Reference)
        case failure(String)
    }

    /// The previous implementation, kept here as the reference.
    struct Reference: Equatable {
        var compact: String
        var header: Data
        var payload: Data
        var signature: Data
        var algorithm: String?
        var chain: [Data]

        static func parse(_ compact: String) -> Outcome {
            let trimmed = compact.trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3 else {
                return .failure("compact JWS needs 3 dot-separated parts, found \(parts.count)")
            }
            guard !parts[0].isEmpty, !parts[1].isEmpty else {
                return .failure("compact JWS has an empty header or payload")
            }
            guard let header = Base64URL.decode(parts[0]) else { return .failure("JWS header is not base64url") }
            guard let payload = Base64URL.decode(parts[1]) else { return .failure("JWS payload is not base64url") }
            guard let signature = Base64URL.decode(parts[2]) else {
                return .failure("JWS signature is not base64url")
            }
            guard let headerObject = (try? JSONSerialization.jsonObject(with: header)) as? [String: Any] else {
                return .failure("JWS header is not a JSON object")
            }
            guard (try? JSONSerialization.jsonObject(with: payload)) is [String: Any] else {
                return .failure("JWS payload is not a JSON object")
            }
            var chain: [Data] = []
            if let x5c = headerObject["x5c"] {
                guard let list = x5c as? [Any] else { return .failure("JWS header x5c is not an array") }
                for (index, item) in list.enumerated() {
                    guard let text = item as? String, let der = Data(base64Encoded: text) else {
                        return .failure("JWS header x5c[\(index)] is not base64 DER")
                    }
                    chain.append(der)
                }
            }
            return .success(
                Reference(
                    compact: trimmed, header: header, payload: payload, signature: signature,
                    algorithm: headerObject["alg"] as? String, chain: chain))
        }
    }

    static func current(_ compact: String) -> Outcome {
        do {
            let jws = try CompactJWS(compact)
            return .success(
                Reference(
                    compact: jws.compact, header: jws.headerJSON, payload: jws.payloadJSON, signature: jws.signature,
                    algorithm: jws.algorithm, chain: jws.certificateChainDER))
        } catch let error as CompactJWS.FormatError {
            return .failure(error.message)
        } catch {
            return .failure("unexpected error \(error)")
        }
    }

    /// SplitMix64: a small deterministic generator for the corpus.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func validSamples() throws -> [String] {
        let chain = VerifyTestWorld.good
        var samples = [
            try chain.sign(payload: VerifyTestWorld.transaction()),
            try chain.sign(payload: VerifyTestWorld.notification(signedTransactionInfo: "a.b.c")),
            try chain.sign(payload: Data(#"{"a":"x\"y\\z\/\n","b":[1,-2,3.5e2,true,false,null,{}],"c":{}}"#.utf8)),
            try chain.sign(payload: Data(#"{"name":"caf\u00e9","n":12345678901234567890}"#.utf8)),
            try chain.sign(payload: Data(" { \"k\" : [ ] } ".utf8)),
            try chain.sign(payload: Data("{\"alg\":\"é\"}".utf8)),
            try chain.sign(payload: Data("[1,2]".utf8)),
            try chain.sign(payload: Data("{\"a\":1".utf8)),
            try chain.sign(payload: Data("{\"a\":01}".utf8)),
            try chain.sign(payload: Data("{\"a\":1e999}".utf8)),
            try chain.sign(payload: Data("{\"a\":\"tab\there\"}".utf8)),
            try chain.sign(payload: Data(#"{"a":tru}"#.utf8)),
            try chain.sign(payload: Data(#"{"a":1,}"#.utf8)),
            try chain.sign(payload: VerifyTestWorld.transaction(), header: ["alg": "none"]),
            try chain.sign(payload: VerifyTestWorld.transaction(), header: ["alg": 7, "x5c": "abc"]),
            try chain.sign(
                payload: VerifyTestWorld.transaction(), header: ["alg": "ES256", "x5c": ["a b", 3] as [any Sendable]]),
            try chain.sign(payload: VerifyTestWorld.transaction(), header: ["x5c": 5]),
        ]
        for name in ["transactionInfo", "renewalInfo", "testNotification"] {
            samples.append(try String(contentsOf: Fixtures.local("apple/signed/\(name)"), encoding: .utf8))
        }
        return samples
    }

    static func mutations(of text: String, random: inout Random, count: Int) -> [String] {
        let bytes = Array(text.utf8)
        let alphabet = Array("AZaz09-_+/=. \t\n{}\"\\é\u{00A0}\u{0301}".utf8)
        var result: [String] = []
        for _ in 0..<count {
            var mutated = bytes
            switch random.below(6) {
            case 0 where !mutated.isEmpty:
                mutated[random.below(mutated.count)] = alphabet[random.below(alphabet.count)]
            case 1 where !mutated.isEmpty:
                mutated.removeSubrange(random.below(mutated.count)...)
            case 2:
                mutated.insert(alphabet[random.below(alphabet.count)], at: random.below(mutated.count + 1))
            case 3:
                mutated = Array(" \n".utf8) + mutated + Array("\r\n ".utf8)
            case 4:
                mutated = Array("\u{00A0}".utf8) + mutated + Array("\u{2003}".utf8)
            default:
                if let dot = mutated.firstIndex(of: UInt8(ascii: ".")) { mutated.remove(at: dot) }
            }
            result.append(String(decoding: mutated, as: UTF8.self))
        }
        return result
    }

    @Test func byteLevelParseMatchesTheStringImplementationOnValidAndMutatedInput() throws {
        var random = Random(state: 7)
        var corpus: [String] = ["", "a.b", "a..c", ".b.c", "a.b.", "a.b.c.d", "é.b.c", "a.\u{00A0}.c", ".\u{0301}a.b"]
        for sample in try Self.validSamples() {
            corpus.append(sample)
            corpus += Self.mutations(of: sample, random: &random, count: 150)
        }
        var accepted = 0
        for text in corpus {
            let expected = Reference.parse(text)
            let actual = Self.current(text)
            #expect(actual == expected, "input: \(text.prefix(120))")
            if case .success = expected { accepted += 1 }
        }
        // The corpus exercises both outcomes.
        #expect(accepted > 20)
        #expect(accepted < corpus.count - 100)
    }

    /// Where the byte-level parse is stricter than the `JSONSerialization` one it replaced: a payload that
    /// names a key twice parses two ways, so it is refused (JSONSerialization kept the last value).
    @Test func aPayloadWithADuplicateKeyIsRefused() throws {
        let compact = try VerifyTestWorld.good.sign(payload: Data(#"{"dup":1,"dup":2}"#.utf8))
        guard case .success = Reference.parse(compact) else {
            Issue.record("the reference implementation accepts the payload")
            return
        }
        #expect(Self.current(compact) == .failure(#"JWS payload has a duplicate key "dup""#))
    }

    @Test func signingInputIsTheHeaderAndPayloadAsTransmitted() throws {
        let text = try VerifyTestWorld.good.sign(payload: VerifyTestWorld.transaction())
        let jws = try CompactJWS("  " + text + "\n")
        let lastDot = text.lastIndex(of: ".") ?? text.endIndex
        #expect(jws.signingInput == Data(text[..<lastDot].utf8))
        #expect(jws.compact == text)
    }

    @Test func base64DecodersAcceptExactlyWhatFoundationBasedDecodersAccept() {
        var random = Random(state: 11)
        let alphabet = Array("ABCDQRSTYZabcdgwxyz0189+/-_== .".utf8)
        for _ in 0..<20_000 {
            let length = random.below(14)
            let bytes = (0..<length).map { _ in alphabet[random.below(alphabet.count)] }
            let text = String(decoding: bytes, as: UTF8.self)
            let url = bytes.withUnsafeBufferPointer { Base64Bytes.decodeURL($0) }
            let standard = bytes.withUnsafeBufferPointer { Base64Bytes.decodeStandard($0) }
            #expect(url == Base64URL.decode(text), "base64url \(text)")
            #expect(standard == Data(base64Encoded: text), "base64 \(text)")
        }
    }

    @Test func fastJSONAcceptsOnlyWhatJSONSerializationAcceptsAndReadsTheSameValues() throws {
        var random = Random(state: 3)
        let seeds = [
            #"{"a":"x","b":[1,-2,3.5,-0.0,1e3,2E-2,true,false,null],"c":{"d":{}},"e":[]}"#,
            #"{"transactionId":"2000000123","price":990,"quantity":1,"signedDate":1717200000000}"#,
            #"{"s":"q\"b\\s\/n\nt\tr\rb\bf\f"}"#, #" [ 1 , { "k" : "v" } ] "#, #"{"n":-9223372036854775808}"#,
        ]
        let alphabet = Array("{}[]\",:.-+eE0129 tfnrule\\/x".utf8)
        var corpus: [[UInt8]] = seeds.map { Array($0.utf8) }
        for seed in seeds {
            for _ in 0..<400 {
                var bytes = Array(seed.utf8)
                for _ in 0...random.below(3) {
                    switch random.below(3) {
                    case 0: bytes[random.below(bytes.count)] = alphabet[random.below(alphabet.count)]
                    case 1: bytes.insert(alphabet[random.below(alphabet.count)], at: random.below(bytes.count + 1))
                    default: if bytes.count > 1 { bytes.remove(at: random.below(bytes.count)) }
                    }
                }
                corpus.append(bytes)
            }
        }
        var fastAccepted = 0
        for bytes in corpus {
            let data = Data(bytes)
            guard let fast = FastJSONValue.parse(data) else { continue }
            fastAccepted += 1
            let foundation = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            #expect(
                foundation != nil,
                "fast path accepted what Foundation rejects: \(String(decoding: bytes, as: UTF8.self))")
            if let foundation {
                #expect(
                    Self.matches(fast, foundation), "different values for \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(fastAccepted > 100)
    }

    static func matches(_ fast: FastJSONValue, _ foundation: Any) -> Bool {
        switch fast {
        case .object(let members):
            guard let object = foundation as? [String: Any], object.count == members.count else { return false }
            return members.allSatisfy { key, value in object[key].map { matches(value, $0) } ?? false }
        case .array(let items):
            guard let list = foundation as? [Any], list.count == items.count else { return false }
            return zip(items, list).allSatisfy { matches($0, $1) }
        case .string(let text):
            return (foundation as? String) == text
        case .integer(let number):
            guard let n = foundation as? NSNumber else { return false }
            return n.int64Value == number && n.doubleValue == Double(number)
        case .number(let text):
            // Only acceptance matters for these (claims never read them: they fall back to JSONDecoder).
            guard let n = foundation as? NSNumber, let double = Double(text) else { return false }
            return abs(n.doubleValue - double) <= abs(double) * 1e-9
        case .bool(let flag):
            return (foundation as? Bool) == flag
        case .null:
            return foundation is NSNull
        }
    }

    @Test func fastClaimsEqualTheDecodableClaimsWhenPresent() throws {
        let decoder = JSONDecoder()
        let payloads: [Data] = [
            VerifyTestWorld.transaction(), VerifyTestWorld.transaction(signedDate: nil), VerifyTestWorld.renewal(),
            VerifyTestWorld.notification(signedTransactionInfo: "x.y.z", signedRenewalInfo: "r.s.t"),
            VerifyTestWorld.notification(appAppleID: nil, summary: true),
            Data(#"{"signedDate":"1717200000000","bundleId":"com.example.coins"}"#.utf8),
            Data(#"{"signedDate":1717200000000.5,"environment":"Sandbox"}"#.utf8),
            Data(#"{"signedDate":null,"data":{"appAppleId":"42"}}"#.utf8),
            Data(#"{"bundleId":7}"#.utf8), Data(#"{"data":[]}"#.utf8),
        ]
        for payload in payloads {
            let jws = try CompactJWS(try VerifyTestWorld.good.sign(payload: payload))
            let viaBytes = PayloadClaims.decode(jws, with: decoder)
            let viaDecoder = PayloadClaims.decode(payload, with: decoder)
            switch (viaBytes, viaDecoder) {
            case (.success(let a), .success(let b)):
                #expect(a.signedDate == b.signedDate && a.bundleId == b.bundleId && a.environment == b.environment)
                #expect(a.data?.bundleId == b.data?.bundleId && a.data?.appAppleId == b.data?.appAppleId)
                #expect(a.data?.signedTransactionInfo == b.data?.signedTransactionInfo)
                #expect(a.data?.signedRenewalInfo == b.data?.signedRenewalInfo)
                #expect(a.summary?.bundleId == b.summary?.bundleId && a.summary?.environment == b.summary?.environment)
            case (.failure(let a), .failure(let b)):
                #expect(a.detail == b.detail)
            default:
                Issue.record("outcome differs for \(String(decoding: payload, as: UTF8.self))")
            }
        }
    }
}
