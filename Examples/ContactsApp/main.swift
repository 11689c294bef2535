import EventGraph
import EventGraphExamples
import Foundation

// Seed 002 as a command: `swift run contacts-import STORE FEED.xml…` imports each feed in its own worker, merges
// the ones that parse and discards the others, then prints Main's contacts by section.

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let storePath = arguments.first else {
    FileHandle.standardError.write(Data("usage: contacts-import STORE FEED.xml...\n".utf8))
    exit(64)
}
do {
    let container = try ModelContainer(path: storePath, model: ContactsModel.model)
    let source = try ContactsDataSource(container: container)
    for feed in arguments.dropFirst() {
        let data = try Data(contentsOf: URL(fileURLWithPath: feed))
        do {
            let worker = try source.importFeed(data, source: feed)
            let difference = try source.merge(worker)
            try source.save()
            print(
                "\(feed): merged (\(difference.insertedRows.count) new, \(difference.movedRows.count) moved, "
                    + "\(difference.updatedRows.count) updated)")
        } catch let error as ContactsFeedError {
            print("\(error) — discarded")
        }
    }
    for section in source.contacts.fetchedSections {
        print(section.name)
        for contact in section.objects {
            print("  \(contact.lastName), \(contact.firstName) <\(contact.email)> \(contact.company)")
        }
    }
    try container.close()
} catch {
    FileHandle.standardError.write(Data("contacts-import: \(error)\n".utf8))
    exit(1)
}
