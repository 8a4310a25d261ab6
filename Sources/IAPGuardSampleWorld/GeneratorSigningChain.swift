import Crypto
import Foundation
import IAPGuard
import IAPGuardTesting
import SwiftASN1
import X509

/// A throw-away 3-certificate ECDSA P-256 chain (root → intermediate → leaf) that signs JWS the way Apple
/// does (`ES256`, `x5c` = [leaf, intermediate, root] as standard base64 DER, raw r||s signature).
/// The intermediate carries Apple's marker OID 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1.
///
/// A small stand-in used by the generator until the shared `TestSigningChain` is merged; only the
/// ``JWSSigning`` conformance and ``rootDER`` are used by ``WorldGenerator``.
struct GeneratorSigningChain: JWSSigning {
    let rootDER: Data
    let intermediateDER: Data
    let leafDER: Data
    /// The leaf's private key, raw (kept as bytes so the chain stays `Sendable`).
    let leafKeyRaw: Data

    var leafKey: P256.Signing.PrivateKey {
        get throws { try P256.Signing.PrivateKey(rawRepresentation: leafKeyRaw) }
    }

    /// Builds a fresh chain valid from `notBefore` to `notAfter`.
    static func generate(commonName: String, notBefore: Date, notAfter: Date) throws -> GeneratorSigningChain {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName {
            CommonName(commonName + " Root CA")
            OrganizationName("iapguard sample world")
            CountryName("US")
        }
        let intermediateName = try DistinguishedName {
            CommonName(commonName + " Intermediate CA")
            OrganizationName("iapguard sample world")
            CountryName("US")
        }
        let leafName = try DistinguishedName {
            CommonName(commonName + " Signing")
            OrganizationName("iapguard sample world")
            CountryName("US")
        }
        let marker: [UInt8] = [0x05, 0x00]  // ASN.1 NULL, as Apple's marker extensions carry
        let root = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(rootKey.publicKey), notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: rootName, subject: rootName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([
                try Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil)).makeCertificateExtension(),
                try Critical(KeyUsage(keyCertSign: true, cRLSign: true)).makeCertificateExtension(),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        let intermediate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(intermediateKey.publicKey), notValidBefore: notBefore,
            notValidAfter: notAfter, issuer: rootName, subject: intermediateName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([
                try Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0)).makeCertificateExtension(),
                try Critical(KeyUsage(keyCertSign: true, cRLSign: true)).makeCertificateExtension(),
                Certificate.Extension(oid: [1, 2, 840, 113635, 100, 6, 2, 1], critical: false, value: marker[...]),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(rootKey))
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(leafKey.publicKey), notValidBefore: notBefore, notValidAfter: notAfter,
            issuer: intermediateName, subject: leafName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions([
                try Critical(BasicConstraints.notCertificateAuthority).makeCertificateExtension(),
                try Critical(KeyUsage(digitalSignature: true)).makeCertificateExtension(),
                Certificate.Extension(oid: [1, 2, 840, 113635, 100, 6, 11, 1], critical: false, value: marker[...]),
            ]),
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey))
        return GeneratorSigningChain(
            rootDER: try der(root), intermediateDER: try der(intermediate), leafDER: try der(leaf),
            leafKeyRaw: leafKey.rawRepresentation)
    }

    private static func der(_ certificate: Certificate) throws -> Data {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    /// The JWS header: `{"alg":"ES256","x5c":[leaf, intermediate, root]}`, base64url.
    private var encodedHeader: String {
        let header = WorldJSON.object([
            ("alg", .string("ES256")),
            (
                "x5c",
                .array([
                    .string(leafDER.base64EncodedString()), .string(intermediateDER.base64EncodedString()),
                    .string(rootDER.base64EncodedString()),
                ])
            ),
        ])
        return Base64URL.encode(Data(header.serialized.utf8))
    }

    func sign(payload: Data) throws -> String {
        let input = encodedHeader + "." + Base64URL.encode(payload)
        let signature = try leafKey.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    /// Writes the chain: `<prefix>-root.der`, `<prefix>-intermediate.der`, `<prefix>-leaf.der` and the leaf's
    /// private key `<prefix>-leaf-key.pem` (what is needed to re-sign).
    func write(to directory: URL, prefix: String) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try rootDER.write(to: directory.appendingPathComponent(prefix + "-root.der"))
        try intermediateDER.write(to: directory.appendingPathComponent(prefix + "-intermediate.der"))
        try leafDER.write(to: directory.appendingPathComponent(prefix + "-leaf.der"))
        try Data(leafKey.pemRepresentation.utf8).write(to: directory.appendingPathComponent(prefix + "-leaf-key.pem"))
    }

    /// Reads a chain written by ``write(to:prefix:)``.
    static func load(from directory: URL, prefix: String) throws -> GeneratorSigningChain {
        let pem = try String(contentsOf: directory.appendingPathComponent(prefix + "-leaf-key.pem"), encoding: .utf8)
        return GeneratorSigningChain(
            rootDER: try Data(contentsOf: directory.appendingPathComponent(prefix + "-root.der")),
            intermediateDER: try Data(contentsOf: directory.appendingPathComponent(prefix + "-intermediate.der")),
            leafDER: try Data(contentsOf: directory.appendingPathComponent(prefix + "-leaf.der")),
            leafKeyRaw: try P256.Signing.PrivateKey(pemRepresentation: pem).rawRepresentation)
    }
}
