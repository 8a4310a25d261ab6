import ArgumentParser
import IAPGuard

@main
struct IAPGuardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "iapguard",
        abstract: "Catch fraud and mistakes in App Store in-app purchases.",
        version: IAPGuardInfo.version,
        subcommands: [
            RunCommand.self,
            DemoCommand.self,
            GenerateCommand.self,
            VerifyCommand.self,
            RulesCommand.self,
            LookupCommand.self,
            CasesCommand.self,
        ]
    )
}
