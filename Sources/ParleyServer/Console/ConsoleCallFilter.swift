import Foundation
import ParleyStore

/// Reads the console's query parameters: the filters of `GET /v1/console/calls` and the window
/// of `GET /v1/console/stats`. Anything malformed is a `BadRequest` naming the parameter.
enum ConsoleCallFilter {
    /// The most calls one page holds.
    static let maximumPageSize = 200
    /// The most words a transcript search (`q`) may hold.
    static let maximumSearchWords = 10

    /// The call query `parameters` ask for.
    static func query(from parameters: [String: String]) throws(BadRequest) -> CallQuery {
        var query = CallQuery()
        query.search = nonEmpty(parameters["search"])
        if let text = nonEmpty(parameters["q"]) {
            let words = ItemRecord.words(of: text)
            guard !words.isEmpty else { throw BadRequest("q must hold at least one word of letters or digits, not '\(text.prefix(100))'.") }
            guard words.count <= maximumSearchWords, words.allSatisfy({ $0.count <= 100 }) else {
                throw BadRequest("q may hold at most \(maximumSearchWords) words of at most 100 characters each.")
            }
            query.transcriptWords = words
        }
        query.agentID = nonEmpty(parameters["agent"])
        query.userID = nonEmpty(parameters["user"])
        query.door = nonEmpty(parameters["door"])
        query.startedFrom = try date(parameters["from"], name: "from")
        query.startedBefore = try date(parameters["to"], name: "to")
        if let text = nonEmpty(parameters["min_duration"]) {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0 else {
                throw BadRequest("min_duration must be a number of seconds, not '\(text)'.")
            }
            query.minimumSeconds = seconds
        }
        query.hasErrors = try flag(parameters["errors"], name: "errors")
        query.isLive = try flag(parameters["live"], name: "live")
        if let text = nonEmpty(parameters["limit"]) {
            guard let limit = Int(text), (1...maximumPageSize).contains(limit) else {
                throw BadRequest("limit must be a whole number from 1 to \(maximumPageSize), not '\(text)'.")
            }
            query.limit = limit
        }
        if let text = nonEmpty(parameters["cursor"]) {
            guard let cursor = CallCursor(text: text) else { throw BadRequest("cursor is not one this server gave out.") }
            query.after = cursor
        }
        return query
    }

    /// The stats window: `from` and `to` (default: the last 24 hours) cut into `bucket` seconds
    /// (default: an hour, at most `ConsoleStats.maximumBuckets` buckets).
    static func window(from parameters: [String: String], now: Date) throws(BadRequest) -> (from: Date, to: Date, bucketSeconds: Int) {
        let to = try date(parameters["to"], name: "to") ?? now
        let from = try date(parameters["from"], name: "from") ?? to.addingTimeInterval(-24 * 3600)
        guard from < to else { throw BadRequest("from must come before to.") }
        var bucketSeconds = 3600
        if let text = nonEmpty(parameters["bucket"]) {
            guard let seconds = Int(text), seconds >= 60 else { throw BadRequest("bucket must be a whole number of seconds, at least 60, not '\(text)'.") }
            bucketSeconds = seconds
        }
        guard to.timeIntervalSince(from) / Double(bucketSeconds) <= Double(ConsoleStats.maximumBuckets) else {
            throw BadRequest("The window holds more than \(ConsoleStats.maximumBuckets) buckets; choose a larger bucket.")
        }
        return (from, to, bucketSeconds)
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        return text
    }

    /// Seconds since 1970, or an ISO 8601 date (`2026-12-04`) or time (`2026-12-04T05:00:00Z`).
    private static func date(_ text: String?, name: String) throws(BadRequest) -> Date? {
        guard let text = nonEmpty(text) else { return nil }
        if let seconds = Double(text), seconds.isFinite { return Date(timeIntervalSince1970: seconds) }
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        if let date = day.date(from: text) { return date }
        throw BadRequest("\(name) must be seconds since 1970 or an ISO 8601 date, not '\(text)'.")
    }

    private static func flag(_ text: String?, name: String) throws(BadRequest) -> Bool? {
        switch nonEmpty(text) {
        case nil: return nil
        case "true": return true
        case "false": return false
        case let other?: throw BadRequest("\(name) must be true or false, not '\(other)'.")
        }
    }
}
