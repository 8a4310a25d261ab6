/// Apple's legacy `verifyReceipt` status codes, explained.
public enum ReceiptStatus {
    /// A one-line explanation of a status code, for reports and the sightings' `verification_detail`.
    public static func explanation(_ status: Int64) -> String {
        switch status {
        case 0: return "0: valid receipt"
        case 21000: return "21000: the request to the App Store was not a POST"
        case 21002: return "21002: malformed receipt data or a temporary issue"
        case 21003: return "21003: the receipt could not be authenticated"
        case 21004: return "21004: the shared secret does not match"
        case 21005: return "21005: the receipt server was unavailable"
        case 21006: return "21006: valid, but the subscription has expired"
        case 21007: return "21007: a sandbox receipt sent to the production environment"
        case 21008: return "21008: a production receipt sent to the sandbox environment"
        case 21009: return "21009: internal data access error"
        case 21010: return "21010: the user account cannot be found or was deleted"
        case 21100...21199: return "\(status): internal data access error (retryable)"
        default: return "\(status): unknown status"
        }
    }
}
