/// iapguard: catches fraud and mistakes in App Store in-app purchases.
///
/// The pipeline flows one way: sources (``Ingest``) → verification (``Verify``) → the store (``Store``)
/// → rules (``Rules``) → reports (``Report``). ``Lookup`` answers support questions from the store.
public enum IAPGuardInfo {
    /// The tool's version, printed by `--version` and recorded in every run and report.
    public static let version = "0.1.0"
}
