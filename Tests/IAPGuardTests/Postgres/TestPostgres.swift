import Foundation

@testable import IAPGuard

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway PostgreSQL server for the tests: `initdb` into a temporary folder and `pg_ctl start` on
/// 127.0.0.1 with a free port and a private socket folder, once per test process, stopped at exit.
///
/// `IAPGUARD_TEST_PG_URL` uses an existing server instead. Debian's binaries are looked up under
/// `/usr/lib/postgresql/*/bin`; as root the server runs as the `postgres` user (initdb refuses root).
/// When neither works, ``skipReason`` says why and the PostgreSQL tests are skipped.
enum TestPostgres {
    /// A running server: the URL of its `postgres` database, as user `iapguard` (trust authentication).
    struct Server: Sendable {
        let url: String
        let dataDirectory: String?
        let pgCtl: String?
        let runAs: String?
    }

    static let server: Result<Server, TestPostgresUnavailable> = start()

    /// Whether the PostgreSQL tests can run.
    static var available: Bool { (try? server.get()) != nil }

    /// Why they cannot (for the skip message).
    static var skipReason: String {
        if case .failure(let reason) = server { return reason.message }
        return ""
    }

    /// Whether CI demands PostgreSQL (`IAPGUARD_TEST_PG=1`): then unavailability is a failure, not a skip.
    static var required: Bool { ProcessInfo.processInfo.environment["IAPGUARD_TEST_PG"] == "1" }

    private static let counter = Counter()

    /// Settings for a fresh, empty schema of the test server (one per call).
    static func freshSettings(_ label: String) throws -> PostgresSettings {
        let server = try server.get()
        var settings = try PostgresSettings.parse(server.url)
        settings.schema = "t_\(label)_\(getpid())_\(counter.next())"
        return settings
    }

    /// A fresh PostgreSQL store in its own schema, migrated.
    static func freshStore(_ label: String) throws -> PostgresStore {
        let store = try PostgresStore(settings: try freshSettings(label))
        try store.migrate()
        return store
    }

    // MARK: Start and stop

    private static func start() -> Result<Server, TestPostgresUnavailable> {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["IAPGUARD_TEST_PG_URL"], !url.isEmpty {
            return .success(Server(url: url, dataDirectory: nil, pgCtl: nil, runAs: nil))
        }
        let fm = FileManager.default
        let versions = ((try? fm.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }
        guard
            let version = versions.first(where: { fm.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/initdb") })
        else {
            return .failure(
                TestPostgresUnavailable(
                    message:
                        "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb): apt-get install postgresql, or set IAPGUARD_TEST_PG_URL"
                ))
        }
        let bin = "/usr/lib/postgresql/\(version)/bin"
        var runAs: String?
        if getuid() == 0 {
            guard getpwnam("postgres") != nil else {
                return .failure(TestPostgresUnavailable(message: "running as root and there is no postgres user"))
            }
            runAs = "postgres"
        }
        let base = fm.temporaryDirectory.appendingPathComponent(
            "iapguard-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        let data = base.appendingPathComponent("data").path
        let socket = base.appendingPathComponent("sock").path
        do {
            try fm.createDirectory(atPath: socket, withIntermediateDirectories: true)
            try fm.createDirectory(atPath: data, withIntermediateDirectories: true)
            try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: base.path)
            try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: data)
            if let runAs {
                try run("/bin/chown", ["-R", "\(runAs):\(runAs)", base.path], as: nil)
            }
            try run(
                "\(bin)/initdb", ["-D", data, "-U", "iapguard", "--auth=trust", "-E", "UTF8", "--no-locale", "-N"],
                as: runAs)
            let port = try freePort()
            let options = "-p \(port) -k \(socket) -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
            try run(
                "\(bin)/pg_ctl",
                [
                    "-D", data, "-l", base.appendingPathComponent("server.log").path, "-o", options, "-w", "-t", "60",
                    "start",
                ],
                as: runAs)
            let server = Server(
                url: "postgres://iapguard@127.0.0.1:\(port)/postgres", dataDirectory: data, pgCtl: "\(bin)/pg_ctl",
                runAs: runAs)
            stopCommand.set(server)
            atexit { TestPostgres.stop() }
            return .success(server)
        } catch {
            return .failure(TestPostgresUnavailable(message: "could not start a throwaway PostgreSQL: \(error)"))
        }
    }

    private static let stopCommand = ServerBox()

    /// Stops the throwaway server (at process exit).
    static func stop() {
        guard let server = stopCommand.get(), let pgCtl = server.pgCtl, let data = server.dataDirectory else { return }
        try? run(pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"], as: server.runAs)
        try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: data).deletingLastPathComponent().path)
    }

    /// Runs a program (as `user` through `runuser` when given) and throws with its output when it fails.
    ///
    /// `posix_spawn` and `waitpid` rather than Foundation's `Process`: `pg_ctl start` leaves a server
    /// running, and waiting through `Process` from a test's cooperative thread could hang.
    static func run(_ program: String, _ arguments: [String], as user: String?) throws {
        let argv = user.map { ["/usr/sbin/runuser", "-u", $0, "--", program] + arguments } ?? [program] + arguments
        let log = TestScratch.root.appendingPathComponent("iapguard-pg-cmd-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: log) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var cArguments = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, &cArguments, environ)
        guard spawned == 0 else {
            throw TestPostgresUnavailable(message: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw TestPostgresUnavailable(
                message:
                    "\(URL(fileURLWithPath: program).lastPathComponent) failed (status \(status)): \(text.suffix(400))")
        }
    }

    /// A TCP port on 127.0.0.1 that is free right now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestPostgresUnavailable(message: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestPostgresUnavailable(message: "bind() failed") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestPostgresUnavailable(message: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why the throwaway PostgreSQL is not there.
struct TestPostgresUnavailable: Error, Sendable, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// A process-wide counter for unique schema names.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

/// The running server, for the exit hook.
final class ServerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var server: TestPostgres.Server?
    func set(_ value: TestPostgres.Server) {
        lock.lock()
        server = value
        lock.unlock()
    }
    func get() -> TestPostgres.Server? {
        lock.lock()
        defer { lock.unlock() }
        return server
    }
}
