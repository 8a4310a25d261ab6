import Crypto
import Foundation
import IAPGuard
import SwiftASN1
import X509

/// A throw-away certificate chain shaped like Apple's (root → intermediate → P-256 leaf) that signs
/// payloads the way the App Store does. For sample data and tests only: nothing it signs verifies
/// against Apple Root CA G3.
///
/// The intermediate carries Apple's marker OID 1.2.840.113635.100.6.2.1 and the leaf
/// 1.2.840.113635.100.6.11.1 unless ``Options`` says otherwise, so a ``JWSVerifier`` that trusts
/// ``rootDER`` accepts its payloads. Signed JWS have the header `{"alg":"ES256","x5c":[leaf,
/// intermediate, root]}` (x5c in standard base64 DER) and a raw r‖s ES256 signature.
public struct TestSigningChain: JWSSigning, Sendable {
    /// How to generate a chain.
    public struct Options: Sendable {
        /// The curve of the root and intermediate keys (the leaf is always P-256, as ES256 requires).
        public enum Curve: String, Sendable, CaseIterable {
            case p256 = "P-256"
            case p384 = "P-384"
        }

        /// Root and intermediate key curve. P-384 mirrors Apple (Root CA G3 and WWDR G6).
        public var rootCurve: Curve
        /// Whether the intermediate carries OID 1.2.840.113635.100.6.2.1.
        public var intermediateHasMarkerOID: Bool
        /// Whether the leaf carries OID 1.2.840.113635.100.6.11.1.
        public var leafHasMarkerOID: Bool
        /// Start of the leaf's validity.
        public var leafNotBefore: Date
        /// End of the leaf's validity.
        public var leafNotAfter: Date
        /// When set, the three private keys (and the serial numbers) are derived from this seed, so the
        /// same seed gives the same keys. Certificates and JWS signatures are still ECDSA signatures
        /// with fresh randomness: the bytes differ from run to run, only the keys are reproducible.
        public var deterministicSeed: UInt64?
        /// Common-name prefix of the three certificates.
        public var commonNamePrefix: String

        /// Defaults: P-384 root, both marker OIDs, leaf valid 2020-01-01 to 2040-01-01 (root and
        /// intermediate 2015-01-01 to 2045-01-01, or longer when the leaf's validity reaches beyond), random
        /// keys.
        public init(
            rootCurve: Curve = .p384,
            intermediateHasMarkerOID: Bool = true,
            leafHasMarkerOID: Bool = true,
            leafNotBefore: Date = Date(timeIntervalSince1970: 1_577_836_800),
            leafNotAfter: Date = Date(timeIntervalSince1970: 2_208_988_800),
            deterministicSeed: UInt64? = nil,
            commonNamePrefix: String = "IAPGuard Test"
        ) {
            self.rootCurve = rootCurve
            self.intermediateHasMarkerOID = intermediateHasMarkerOID
            self.leafHasMarkerOID = leafHasMarkerOID
            self.leafNotBefore = leafNotBefore
            self.leafNotAfter = leafNotAfter
            self.deterministicSeed = deterministicSeed
            self.commonNamePrefix = commonNamePrefix
        }
    }

    /// Why a chain could not be generated, written or loaded.
    public struct ChainError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The root certificate (DER): what a verifier must trust to accept this chain's payloads.
    public let rootDER: Data
    /// The intermediate certificate (DER).
    public let intermediateDER: Data
    /// The leaf certificate (DER).
    public let leafDER: Data
    /// The leaf's signing key (raw scalar; swift-crypto keys are not `Sendable`).
    let leafKeyRaw: Data

    var leafKey: P256.Signing.PrivateKey {
        get throws {
            do {
                return try P256.Signing.PrivateKey(rawRepresentation: leafKeyRaw)
            } catch {
                throw ChainError(message: "leaf key is not a P-256 scalar: \(error)")
            }
        }
    }

    /// File names used by ``write(to:prefix:)`` and ``load(from:prefix:)``, each preceded by `<prefix>-`
    /// when a prefix is given.
    static let rootFile = "root.der"
    static let intermediateFile = "intermediate.der"
    static let leafFile = "leaf.der"
    static let leafKeyFile = "leaf-key.pem"

    private static func fileName(_ name: String, prefix: String?) -> String {
        prefix.map { "\($0)-\(name)" } ?? name
    }

    init(rootDER: Data, intermediateDER: Data, leafDER: Data, leafKey: P256.Signing.PrivateKey) {
        self.rootDER = rootDER
        self.intermediateDER = intermediateDER
        self.leafDER = leafDER
        self.leafKeyRaw = leafKey.rawRepresentation
    }

    // MARK: - Generating

    /// Generates a new root, intermediate and leaf according to `options`.
    public static func generate(options: Options = .init()) throws -> TestSigningChain {
        let rootKey = try makeCAKey(options.rootCurve, seed: options.deterministicSeed, label: "root")
        let intermediateKey = try makeCAKey(options.rootCurve, seed: options.deterministicSeed, label: "intermediate")
        let leafKey = try makeP256Key(seed: options.deterministicSeed, label: "leaf")
        let caAlgorithm: Certificate.SignatureAlgorithm =
            options.rootCurve == .p384 ? .ecdsaWithSHA384 : .ecdsaWithSHA256
        // 2015-01-01 to 2045-01-01, widened to cover the leaf's validity when it reaches beyond.
        let caNotBefore = min(Date(timeIntervalSince1970: 1_420_070_400), options.leafNotBefore)
        let caNotAfter = max(Date(timeIntervalSince1970: 2_366_841_600), options.leafNotAfter)

        do {
            let rootName = try DistinguishedName {
                CommonName("\(options.commonNamePrefix) Root CA")
                OrganizationName("IAPGuard Test")
            }
            let intermediateName = try DistinguishedName {
                CommonName("\(options.commonNamePrefix) Intermediate CA")
                OrganizationName("IAPGuard Test")
            }
            let leafName = try DistinguishedName {
                CommonName("\(options.commonNamePrefix) Signing Leaf")
                OrganizationName("IAPGuard Test")
            }
            let root = try Certificate(
                version: .v3,
                serialNumber: serial(seed: options.deterministicSeed, label: "root"),
                publicKey: rootKey.publicKey,
                notValidBefore: caNotBefore,
                notValidAfter: caNotAfter,
                issuer: rootName,
                subject: rootName,
                signatureAlgorithm: caAlgorithm,
                extensions: Certificate.Extensions([
                    Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: nil), critical: true),
                    Certificate.Extension(KeyUsage(keyCertSign: true, cRLSign: true), critical: true),
                ]),
                issuerPrivateKey: rootKey
            )
            var intermediateExtensions = [
                try Certificate.Extension(BasicConstraints.isCertificateAuthority(maxPathLength: 0), critical: true),
                try Certificate.Extension(KeyUsage(keyCertSign: true, cRLSign: true), critical: true),
            ]
            if options.intermediateHasMarkerOID {
                intermediateExtensions.append(markerExtension(AppleMarkerOID.intermediate))
            }
            let intermediate = try Certificate(
                version: .v3,
                serialNumber: serial(seed: options.deterministicSeed, label: "intermediate"),
                publicKey: intermediateKey.publicKey,
                notValidBefore: caNotBefore,
                notValidAfter: caNotAfter,
                issuer: rootName,
                subject: intermediateName,
                signatureAlgorithm: caAlgorithm,
                extensions: Certificate.Extensions(intermediateExtensions),
                issuerPrivateKey: rootKey
            )
            var leafExtensions = [
                try Certificate.Extension(BasicConstraints.notCertificateAuthority, critical: true),
                try Certificate.Extension(KeyUsage(digitalSignature: true), critical: true),
            ]
            if options.leafHasMarkerOID {
                leafExtensions.append(markerExtension(AppleMarkerOID.leaf))
            }
            let leaf = try Certificate(
                version: .v3,
                serialNumber: serial(seed: options.deterministicSeed, label: "leaf"),
                publicKey: Certificate.PublicKey(leafKey.publicKey),
                notValidBefore: options.leafNotBefore,
                notValidAfter: options.leafNotAfter,
                issuer: intermediateName,
                subject: leafName,
                signatureAlgorithm: caAlgorithm,
                extensions: Certificate.Extensions(leafExtensions),
                issuerPrivateKey: intermediateKey
            )
            return TestSigningChain(
                rootDER: try derBytes(root),
                intermediateDER: try derBytes(intermediate),
                leafDER: try derBytes(leaf),
                leafKey: leafKey
            )
        } catch let error as ChainError {
            throw error
        } catch {
            throw ChainError(message: "could not build test certificates: \(error)")
        }
    }

    // MARK: - Signing

    /// The x5c header entries: leaf, intermediate, root in standard base64.
    public var x5cBase64: [String] {
        [leafDER, intermediateDER, rootDER].map { $0.base64EncodedString() }
    }

    /// Signs `payload` (JSON bytes) as Apple does and returns `header.payload.signature`.
    public func sign(payload: Data) throws -> String {
        let quoted = x5cBase64.map { "\"\($0)\"" }.joined(separator: ",")
        return try sign(payload: payload, headerJSON: Data("{\"alg\":\"ES256\",\"x5c\":[\(quoted)]}".utf8))
    }

    /// Signs `payload` under an arbitrary header (tests forge `alg: none`, `HS256` or short chains with
    /// it). The signature is always ES256 with the leaf key, whatever the header says.
    public func sign(payload: Data, header: [String: any Sendable]) throws -> String {
        let headerJSON: Data
        do {
            headerJSON = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        } catch {
            throw ChainError(message: "header is not JSON-serialisable: \(error)")
        }
        return try sign(payload: payload, headerJSON: headerJSON)
    }

    private func sign(payload: Data, headerJSON: Data) throws -> String {
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payload)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try leafKey.signature(for: Data(signingInput.utf8))
        } catch {
            throw ChainError(message: "ES256 signing failed: \(error)")
        }
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }

    // MARK: - Files

    /// Writes `root.der`, `intermediate.der`, `leaf.der` and `leaf-key.pem` (PKCS#8) into `directory`,
    /// creating it if needed, so the chain can be loaded later to re-sign payloads. With a `prefix`, the
    /// names are `<prefix>-root.der` and so on (two chains in one folder).
    public func write(to directory: URL, prefix: String? = nil) throws {
        func url(_ name: String) -> URL { directory.appendingPathComponent(Self.fileName(name, prefix: prefix)) }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try rootDER.write(to: url(Self.rootFile), options: .atomic)
            try intermediateDER.write(to: url(Self.intermediateFile), options: .atomic)
            try leafDER.write(to: url(Self.leafFile), options: .atomic)
            try Data(leafKey.pemRepresentation.utf8).write(to: url(Self.leafKeyFile), options: .atomic)
        } catch {
            throw ChainError(message: "could not write test chain to \(directory.path): \(error)")
        }
    }

    /// Loads a chain written by ``write(to:prefix:)`` with the same `prefix`. Throws if a file is missing,
    /// unparsable, or the key does not belong to the leaf certificate.
    public static func load(from directory: URL, prefix: String? = nil) throws -> TestSigningChain {
        func read(_ name: String) throws -> Data {
            let file = fileName(name, prefix: prefix)
            do {
                return try Data(contentsOf: directory.appendingPathComponent(file))
            } catch {
                throw ChainError(message: "could not read \(file) in \(directory.path): \(error)")
            }
        }
        let rootDER = try read(rootFile)
        let intermediateDER = try read(intermediateFile)
        let leafDER = try read(leafFile)
        let keyText = String(decoding: try read(leafKeyFile), as: UTF8.self)
        let leafKey: P256.Signing.PrivateKey
        let leaf: Certificate
        do {
            leafKey = try P256.Signing.PrivateKey(pemRepresentation: keyText)
            leaf = try Certificate(derEncoded: Array(leafDER))
            _ = try Certificate(derEncoded: Array(intermediateDER))
            _ = try Certificate(derEncoded: Array(rootDER))
        } catch {
            throw ChainError(message: "test chain in \(directory.path) is not readable: \(error)")
        }
        guard leaf.publicKey == Certificate.PublicKey(leafKey.publicKey) else {
            throw ChainError(
                message:
                    "\(fileName(leafKeyFile, prefix: prefix)) does not belong to \(fileName(leafFile, prefix: prefix)) in \(directory.path)"
            )
        }
        return TestSigningChain(rootDER: rootDER, intermediateDER: intermediateDER, leafDER: leafDER, leafKey: leafKey)
    }

    // MARK: - Keys and serials

    private static func makeCAKey(_ curve: Options.Curve, seed: UInt64?, label: String) throws -> Certificate.PrivateKey
    {
        switch curve {
        case .p256:
            return Certificate.PrivateKey(try makeP256Key(seed: seed, label: label))
        case .p384:
            guard let seed else { return Certificate.PrivateKey(P384.Signing.PrivateKey()) }
            for counter in 0..<64 {
                let bytes = SHA384.hash(data: seedMaterial(seed, label, counter))
                if let key = try? P384.Signing.PrivateKey(rawRepresentation: Data(bytes)) {
                    return Certificate.PrivateKey(key)
                }
            }
            throw ChainError(message: "could not derive a P-384 key from seed \(seed)")
        }
    }

    private static func makeP256Key(seed: UInt64?, label: String) throws -> P256.Signing.PrivateKey {
        guard let seed else { return P256.Signing.PrivateKey() }
        // A digest is a valid scalar unless it is zero or ≥ the group order (probability ~2^-32).
        for counter in 0..<64 {
            let bytes = SHA256.hash(data: seedMaterial(seed, label, counter))
            if let key = try? P256.Signing.PrivateKey(rawRepresentation: Data(bytes)) {
                return key
            }
        }
        throw ChainError(message: "could not derive a P-256 key from seed \(seed)")
    }

    private static func seedMaterial(_ seed: UInt64, _ label: String, _ counter: Int) -> Data {
        Data("iapguard-test-chain|\(seed)|\(label)|\(counter)".utf8)
    }

    private static func serial(seed: UInt64?, label: String) -> Certificate.SerialNumber {
        guard let seed else { return Certificate.SerialNumber() }
        // Positive, 16 bytes.
        var bytes = Array(SHA256.hash(data: seedMaterial(seed, "serial-" + label, 0)).prefix(16))
        bytes[0] &= 0x7F
        bytes[0] |= 0x01
        return Certificate.SerialNumber(bytes: bytes)
    }

    private static func markerExtension(_ oid: ASN1ObjectIdentifier) -> Certificate.Extension {
        // Apple's marker extensions are non-critical with an ASN.1 NULL value.
        Certificate.Extension(oid: oid, critical: false, value: [0x05, 0x00])
    }

    private static func derBytes(_ certificate: Certificate) throws -> Data {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }
}
