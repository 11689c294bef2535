import EventGraph
import Foundation
import Testing

/// New stores are private unless the configuration asks for a wider mode (issue 9, item 5).
@Suite("Store file permissions option")
struct FilePermissionsOptionTests {
    @Test("a configuration's permissions apply to a new store exactly", arguments: [UInt32(0o600), 0o640, 0o660])
    func configuredPermissions(permissions: UInt32) throws {
        let directory = TemporaryDirectory()
        var configuration = ModelContainer.Configuration()
        configuration.filePermissions = permissions
        let container = try ModelContainer(
            path: directory.file(), model: TestModels.school, configuration: configuration)
        try container.close()
        var info = stat()
        #expect(stat(directory.file(), &info) == 0)
        #expect(UInt32(info.st_mode) & 0o7777 == permissions)
    }
}
