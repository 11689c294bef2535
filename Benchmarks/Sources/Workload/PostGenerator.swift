import EventGraphExamples
import Foundation

/// One post's values, independent of either engine.
public struct PostData: Sendable {
    public var identity: Int64
    public var title: String
    public var body: String
    public var excerpt: String
    public var url: String
    /// Seconds since 2001-01-01.
    public var date: Double
    /// Index into ``World/authors``.
    public var authorIndex: Int
    /// Indices into ``World/tags`` (two or three, distinct).
    public var tagIndices: [Int]

    /// The bytes of the post's attribute values: the two 8-byte numbers and the UTF-8 of the four strings.
    public var attributeByteCount: Int {
        16 + title.utf8.count + body.utf8.count + excerpt.utf8.count + url.utf8.count
    }
}

/// The authors and tags that posts refer to.
public struct World: Sendable {
    public struct AuthorData: Sendable {
        public var identity: Int64
        public var name: String
        public var email: String
    }

    public var authors: [AuthorData]
    public var tags: [String]

    /// One author and one tag per 100 posts (at least 10 of each): small enough that every post shares them,
    /// large enough that no tag holds a large fraction of all posts.
    public init(postCount: Int) {
        let count = max(10, postCount / 100)
        authors = (0..<count).map { index in
            let name =
                "\(PostGenerator.firstNames[index % PostGenerator.firstNames.count]) "
                + "\(PostGenerator.lastNames[(index / PostGenerator.firstNames.count) % PostGenerator.lastNames.count]) \(index)"
            return AuthorData(identity: Int64(index + 1), name: name, email: "author\(index)@blog.example.com")
        }
        tags = (0..<count).map { "\(PostGenerator.words[$0 % PostGenerator.words.count])-\($0)" }
    }
}

/// Deterministic posts from seed 000: post `n` is the same for every engine, run and process, so a store can be
/// built in one process and queried in another.
public struct PostGenerator: Sendable {
    public let seed: UInt64
    public let world: World

    public init(postCount: Int, seed: UInt64 = 0) {
        self.seed = seed
        self.world = World(postCount: postCount)
    }

    /// Dates start at 2024-01-01; ten consecutive posts share a date, then the date advances one hour.
    public static let firstDate: Double = 725_846_400
    public static let postsPerDate = 10

    /// The date of post `index` (0-based).
    public static func date(ofPostAt index: Int) -> Double {
        firstDate + Double(index / postsPerDate) * 3600
    }

    /// Post `index` (0-based); its identity is `index + 1`.
    public func post(at index: Int) -> PostData {
        var random = stream(index, salt: 0)
        let title = Self.text(characterCount: 40, random: &random).capitalizedFirst
        let body = Self.text(characterCount: 300, random: &random)
        let excerpt = Self.text(characterCount: 80, random: &random)
        let slug = title.lowercased().split(separator: " ").prefix(3).joined(separator: "-")
        var url = "https://blog.example.com/posts/\(index + 1)/\(slug)"
        if url.utf8.count < 60 { url += String(repeating: "x", count: 60 - url.utf8.count) }
        let authorIndex = Int(random.next() % UInt64(world.authors.count))
        var tagIndices: [Int] = []
        let tagCount = 2 + Int(random.next() % 2)
        while tagIndices.count < tagCount {
            let tag = Int(random.next() % UInt64(world.tags.count))
            if !tagIndices.contains(tag) { tagIndices.append(tag) }
        }
        return PostData(
            identity: Int64(index + 1), title: title, body: body, excerpt: excerpt, url: url,
            date: Self.date(ofPostAt: index), authorIndex: authorIndex, tagIndices: tagIndices)
    }

    /// An independent random stream per post: the seed is scrambled, because SplitMix64 streams started at
    /// seeds that differ by multiples of its increment are the same stream shifted (posts would share text).
    private func stream(_ index: Int, salt: UInt64) -> SplitMix64 {
        var scrambler = SplitMix64(
            seed: seed ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03) ^ (salt &* 0xA24B_AED4_963E_E407))
        return SplitMix64(seed: scrambler.next())
    }

    /// Posts `range`.
    public func posts(_ range: Range<Int>) -> [PostData] {
        range.map(post(at:))
    }

    /// A new title for post `index` (the updates before compaction), the same length as titles.
    public func updatedTitle(ofPostAt index: Int, generation: Int) -> String {
        var random = stream(index, salt: UInt64(generation))
        return Self.text(characterCount: 40, random: &random).capitalizedFirst
    }

    /// Words separated by spaces, about `characterCount` characters long. Word ranks follow a Zipf-like law
    /// (rank r with probability ∝ 1/r) over a vocabulary of 8,192 made-up words, so text compresses like prose
    /// (LZ4 about 1.8×) rather than like a short word list repeated (which would flatter a compressing engine).
    static func text(characterCount: Int, random: inout SplitMix64) -> String {
        var text = ""
        text.reserveCapacity(characterCount + 24)
        while text.utf8.count < characterCount {
            if !text.isEmpty { text += " " }
            let uniform = Double(random.next() >> 11) / Double(1 << 53)
            let rank = Int(exp(uniform * log(Double(words.count + 1)))) - 1
            text += words[min(max(rank, 0), words.count - 1)]
        }
        return text
    }

    /// The vocabulary: 8,192 distinct words of one to four syllables, from a fixed seed.
    static let words: [String] = {
        let consonants = [
            "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
            "ch", "st", "th", "tr", "pl", "gr",
        ]
        let vowels = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y"]
        let endings = ["n", "r", "s", "t", "l", "d", "ng", "ck"]
        var random = SplitMix64(seed: 000)
        var words: [String] = []
        var seen: Set<String> = []
        while words.count < 8192 {
            var word = ""
            for _ in 0..<(1 + Int(random.next() % 4)) {
                word += consonants[Int(random.next() % UInt64(consonants.count))]
                word += vowels[Int(random.next() % UInt64(vowels.count))]
            }
            if random.next() % 5 < 2 { word += endings[Int(random.next() % UInt64(endings.count))] }
            if seen.insert(word).inserted { words.append(word) }
        }
        return words
    }()

    static let firstNames = [
        "Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "John", "Leslie", "Niklaus",
    ]
    static let lastNames = [
        "Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Lamport", "Wirth",
    ]

    /// The words that substring queries look for: frequent-ish words (ranks 16 and up) of at least six letters,
    /// each in a few percent of titles.
    public static let substringQueryWords: [String] = Array(words.dropFirst(16).filter { $0.count >= 6 }.prefix(20))
}

extension String {
    fileprivate var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}
