import Crypto
import Foundation

@testable import IAPGuard

/// A fake App Store Server API on a loopback server: checks every request's JWT (ES256 signature with the
/// test key, kid, typ, iss, aud, bid, iat/exp), serves paged transaction history, refund history,
/// notification history and order lookup in Apple's JSON shapes, and injects faults on demand.
///
/// Environments are path prefixes: `/Production/...` and `/Sandbox/...` (the config's `base_urls`). Each app
/// (`bundleID` and `otherBundleIDs`, the JWT's `bid`) has its own data: a request signed for one app never
/// sees another's.
final class FakeAppStoreAPI: @unchecked Sendable {
    /// A fault served instead of the next matching request.
    enum Fault: Sendable {
        case status(Int, errorCode: Int?)
        case tooManyRequests(retryAfter: String)
        case truncated
        case malformedJSON
        case wrongShape
        case slow(TimeInterval)
        case drop
        /// A 200 that promises more pages but repeats the revision it was asked for, with no records.
        case stuck
        /// An empty page that promises more with the next revision or pagination token each time (`rev-N+1`,
        /// `tok-N+1`): an API that makes no progress but looks as if it did.
        case emptyAdvancing
        /// Served normally (lets a later fault hit a request on a kept-alive connection).
        case pass
        /// Served as the page asked for, but its revision (or `paginationToken`) points back to the first page
        /// and it promises more: alternated with `.pass`, the paging runs in a circle.
        case rewind
    }

    struct Notification: Sendable {
        var signedDate: Int64
        var type: String
        var signedPayload: String
    }

    let issuerID: String
    let keyID: String
    let bundleID: String
    let otherBundleIDs: [String]
    let publicKey: P256.Signing.PublicKey
    let pageSize: Int
    private let lock = NSLock()
    // Guarded by `lock`.
    /// An app in an environment.
    struct Scope: Hashable {
        var bundle: String
        var environment: AppleEnvironment
    }
    /// Signed transactions per customer, oldest first; which customer each transaction id belongs to.
    private var histories: [Scope: [String: [String]]] = [:]
    private var historyIDs: [Scope: [String: String]] = [:]
    private var refunds: [Scope: [String: [String]]] = [:]
    private var notifications: [Scope: [Notification]] = [:]
    private var orders: [String: [String]] = [:]
    /// Signed app transactions by the transaction id they are asked for.
    private var appTransactions: [Scope: [String: String]] = [:]
    private var faults: [(pathContains: String, fault: Fault)] = []
    private var served: [String] = []
    private var jwtFailures: [String] = []
    private(set) var server: LoopbackHTTPServer?

    init(
        issuerID: String, keyID: String, bundleID: String, otherBundleIDs: [String] = [],
        publicKey: P256.Signing.PublicKey, pageSize: Int = 2, keepAlive: Bool = false
    ) throws {
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.otherBundleIDs = otherBundleIDs
        self.publicKey = publicKey
        self.pageSize = pageSize
        server = try LoopbackHTTPServer(keepAlive: keepAlive) { [unowned self] request in self.handle(request) }
    }

    func stop() { server?.stop() }

    var baseURL: URL { server!.baseURL }
    func baseURL(_ environment: AppleEnvironment) -> URL {
        baseURL.appendingPathComponent(environment.rawValue)
    }

    // MARK: - Data

    /// Adds a transaction to `customer`'s history (Apple answers a history or refund lookup of any of a
    /// customer's transaction ids with that customer's list).
    func addHistory(
        _ signed: String, transactionID: String, environment: AppleEnvironment, bundle: String? = nil,
        customer: String = "customer"
    ) {
        let scope = Scope(bundle: bundle ?? bundleID, environment: environment)
        locked {
            histories[scope, default: [:]][customer, default: []].append(signed)
            historyIDs[scope, default: [:]][transactionID] = customer
        }
    }
    /// Forgets every customer's history (Apple's answers corrected).
    func clearHistories() { locked { histories = [:] } }
    func addRefund(
        _ signed: String, environment: AppleEnvironment, bundle: String? = nil, customer: String = "customer"
    ) {
        locked {
            refunds[Scope(bundle: bundle ?? bundleID, environment: environment), default: [:]][
                customer, default: []
            ].append(signed)
        }
    }
    func addNotification(_ n: Notification, environment: AppleEnvironment, bundle: String? = nil) {
        locked {
            notifications[Scope(bundle: bundle ?? bundleID, environment: environment), default: []].append(n)
        }
    }
    func addOrder(_ orderID: String, signed: [String]) { locked { orders[orderID] = signed } }
    /// Serves `signed` (a signed app transaction) for Get App Transaction Info of `transactionID`.
    func addAppTransaction(
        _ signed: String, transactionID: String, environment: AppleEnvironment, bundle: String? = nil
    ) {
        locked {
            appTransactions[Scope(bundle: bundle ?? bundleID, environment: environment), default: [:]][transactionID] =
                signed
        }
    }

    /// Queues a fault for the next request whose path contains `pathContains`.
    func inject(_ fault: Fault, on pathContains: String = "/") {
        locked { faults.append((pathContains, fault)) }
    }

    /// Paths of requests answered normally.
    var servedPaths: [String] { locked { served } }
    var rejectedTokens: [String] { locked { jwtFailures } }
    var requestCount: Int { server?.requests.count ?? 0 }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    // MARK: - Serving

    private func handle(_ request: LoopbackHTTPServer.Request) -> LoopbackHTTPServer.Reply {
        let bid: String
        switch checkJWT(request.headers["authorization"]) {
        case .failure(let problem):
            locked { jwtFailures.append(problem.text) }
            return .respond(status: 401, headers: [:], body: Data())
        case .success(let app):
            bid = app
        }
        let fault: Fault? = locked {
            guard let index = faults.firstIndex(where: { request.path.contains($0.pathContains) }) else { return nil }
            return faults.remove(at: index).fault
        }
        var rewind = false
        if let fault {
            switch fault {
            case .status(let status, let code):
                return .json(status, code.map { "{\"errorCode\": \($0), \"errorMessage\": \"injected\"}" } ?? "")
            case .tooManyRequests(let after):
                return .json(
                    429, "{\"errorCode\": 4290000, \"errorMessage\": \"Rate limit exceeded.\"}",
                    headers: ["Retry-After": after])
            case .truncated:
                let body = Data(
                    String(repeating: "{\"signedTransactions\": [], \"hasMore\": false}    ", count: 10).utf8)
                return .truncated(status: 200, body: body, sent: body.count / 2)
            case .malformedJSON:
                return .json(200, "{\"signedTransactions\": [\"abc\", ")
            case .wrongShape:
                return .json(200, "{\"signedTransactions\": \"not-a-list\", \"hasMore\": false}")
            case .slow(let seconds):
                return .delayed(
                    seconds, status: 200, body: Data("{\"signedTransactions\": [], \"hasMore\": false}".utf8))
            case .drop:
                return .drop
            case .stuck:
                let revision = request.query["revision"] ?? "rev-0"
                return .json(200, "{\"signedTransactions\": [], \"revision\": \"\(revision)\", \"hasMore\": true}")
            case .emptyAdvancing:
                let revision = request.query["revision"].flatMap { Int($0.replacingOccurrences(of: "rev-", with: "")) }
                let token = request.query["paginationToken"].flatMap {
                    Int($0.replacingOccurrences(of: "tok-", with: ""))
                }
                return .json(
                    200,
                    "{\"signedTransactions\": [], \"notificationHistory\": [], \"revision\": \"rev-\((revision ?? 0) + 1)\", "
                        + "\"paginationToken\": \"tok-\((token ?? 0) + 1)\", \"hasMore\": true}")
            case .pass:
                break
            case .rewind:
                rewind = true
            }
        }
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count >= 3, let environment = AppleEnvironment(rawValue: parts[0]) else {
            return .json(404, "{\"errorCode\": 4040000, \"errorMessage\": \"no such path\"}")
        }
        let scope = Scope(bundle: bid, environment: environment)
        let route = parts.dropFirst().joined(separator: "/")
        let reply: LoopbackHTTPServer.Reply
        if route.hasPrefix("inApps/v2/history/"), request.method == "GET" {
            reply = history(
                scope: scope, id: parts.last ?? "", revision: request.query["revision"], refunds: false, rewind: rewind)
        } else if route.hasPrefix("inApps/v2/refund/lookup/"), request.method == "GET" {
            reply = history(
                scope: scope, id: parts.last ?? "", revision: request.query["revision"], refunds: true, rewind: rewind)
        } else if route == "inApps/v1/notifications/history", request.method == "POST" {
            reply = notificationHistory(
                scope: scope, body: request.body, token: request.query["paginationToken"], rewind: rewind)
        } else if route.hasPrefix("inApps/v1/transactions/appTransactions/"), request.method == "GET" {
            if let signed = locked({ appTransactions[scope]?[parts.last ?? ""] }) {
                reply = .json(200, json(["signedAppTransactionInfo": signed]))
            } else {
                reply = .json(404, "{\"errorCode\": 4040010, \"errorMessage\": \"Transaction id not found.\"}")
            }
        } else if route.hasPrefix("inApps/v1/lookup/"), request.method == "GET" {
            let signed = locked { orders[parts.last ?? ""] }
            reply = .json(200, json(["status": signed == nil ? 1 : 0, "signedTransactions": signed ?? []]))
        } else {
            reply = .json(404, "{\"errorCode\": 4040000, \"errorMessage\": \"no such path\"}")
        }
        locked { served.append(request.path) }
        return reply
    }

    private func history(scope: Scope, id: String, revision: String?, refunds isRefunds: Bool, rewind: Bool = false)
        -> LoopbackHTTPServer.Reply
    {
        let (customer, lists) = locked {
            (historyIDs[scope]?[id], isRefunds ? refunds[scope, default: [:]] : histories[scope, default: [:]])
        }
        guard let customer else {
            return .json(404, "{\"errorCode\": 4040010, \"errorMessage\": \"Transaction id not found.\"}")
        }
        let list = lists[customer, default: []]
        let start = revision.flatMap { Int($0.replacingOccurrences(of: "rev-", with: "")) } ?? 0
        let page = Array(list.dropFirst(start).prefix(pageSize))
        let next = min(list.count, start + page.count)
        var object: [String: Any] = [
            "signedTransactions": page, "revision": rewind ? "rev-0" : "rev-\(next)",
            "hasMore": rewind || next < list.count,
        ]
        if !isRefunds {
            object["bundleId"] = scope.bundle
            object["environment"] = scope.environment.rawValue
            object["appAppleId"] = 1234
        }
        return .json(200, json(object))
    }

    private func notificationHistory(scope: Scope, body: Data, token: String?, rewind: Bool = false)
        -> LoopbackHTTPServer.Reply
    {
        guard let query = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let start = (query["startDate"] as? NSNumber)?.int64Value,
            let end = (query["endDate"] as? NSNumber)?.int64Value
        else {
            return .json(400, "{\"errorCode\": 4000000, \"errorMessage\": \"bad body\"}")
        }
        let type = query["notificationType"] as? String
        let all = locked { notifications[scope, default: []] }
        let matching = all.filter { $0.signedDate >= start && $0.signedDate <= end && (type == nil || $0.type == type) }
            .sorted { $0.signedDate < $1.signedDate }
        let offset = token.flatMap { Int($0.replacingOccurrences(of: "tok-", with: "")) } ?? 0
        let page = Array(matching.dropFirst(offset).prefix(pageSize))
        let next = offset + page.count
        var object: [String: Any] = [
            "hasMore": rewind || next < matching.count,
            "notificationHistory": page.map {
                [
                    "signedPayload": $0.signedPayload,
                    "sendAttempts": [["attemptDate": $0.signedDate, "sendAttemptResult": "NO_RESPONSE"]],
                ]
            },
        ]
        if rewind {
            object["paginationToken"] = "tok-0"
        } else if next < matching.count {
            object["paginationToken"] = "tok-\(next)"
        }
        return .json(200, json(object))
    }

    private func json(_ object: [String: Any]) -> String {
        String(
            decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(),
            as: UTF8.self)
    }

    struct JWTProblem: Error {
        var text: String
    }

    /// Checks the bearer JWT as Apple does; returns the app (`bid`) it was signed for, or the problem.
    private func checkJWT(_ header: String?) -> Result<String, JWTProblem> {
        switch jwtProblem(header) {
        case .some(let problem): return .failure(JWTProblem(text: problem))
        case .none: return .success(jwtBundle(header) ?? bundleID)
        }
    }

    private func jwtBundle(_ header: String?) -> String? {
        guard let header, let claims = header.dropFirst(7).split(separator: ".").dropFirst().first,
            let data = Base64URL.decode(String(claims)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["bid"] as? String
    }

    private func jwtProblem(_ header: String?) -> String? {
        guard let header, header.hasPrefix("Bearer ") else { return "no bearer token" }
        let parts = header.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]),
            let claimsData = Base64URL.decode(parts[1]),
            let signatureData = Base64URL.decode(parts[2]),
            let head = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: claimsData) as? [String: Any]
        else { return "not a JWT" }
        guard head["alg"] as? String == "ES256", head["kid"] as? String == keyID, head["typ"] as? String == "JWT" else {
            return "bad header"
        }
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return "bad signature" }
        let now = Int64(Date().timeIntervalSince1970)
        guard claims["iss"] as? String == issuerID, claims["aud"] as? String == "appstoreconnect-v1",
            let bid = claims["bid"] as? String, bid == bundleID || otherBundleIDs.contains(bid)
        else { return "bad claims" }
        guard let iat = (claims["iat"] as? NSNumber)?.int64Value, let exp = (claims["exp"] as? NSNumber)?.int64Value,
            iat <= now + 60, exp > now, exp - iat <= 1200
        else { return "expired or too long-lived" }
        return nil
    }
}
