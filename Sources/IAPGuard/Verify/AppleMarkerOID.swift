import SwiftASN1

/// The extension OIDs Apple puts in its App Store signing certificates.
package enum AppleMarkerOID {
    /// On the WWDR intermediate (Apple Worldwide Developer Relations CA - G6).
    package static let intermediate: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]
    /// On the App Store receipt-signing leaf.
    package static let leaf: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
}
