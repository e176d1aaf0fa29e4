import CCRelayCore
import CoreVocabulary
@testable import DesktopServices
import Testing

/// The notifier's slot rules as a pure model (issue 23), apart from D-Bus:
/// one bubble per kind, replaced by its id; posts while one is under way
/// coalesce; what waits for a server; our own closes never taken for the
/// user's dismissal; bubbles of an earlier run adopted.
@Suite struct NotificationSlotsTests {
    func alert(_ kind: AlertKind, _ body: String) -> Alert { .sample(kind, body: body) }

    @Test func aKindsNextAlertReplacesItsBubble() throws {
        var book = NotificationSlots()
        let first = alert(.keepAliveFailing, "first"), second = alert(.keepAliveFailing, "second"), other = alert(.locationOff, "other")
        let posted = book.post(first, serverKnown: true)
        #expect(posted == [.notify(first, replacing: 0)])
        let answered = book.answered(.keepAliveFailing, previousID: 0, id: 7)
        let answer = try #require(answered)
        #expect(answer.delivered == 7 && answer.close.isEmpty && answer.next == nil)
        let replaced = book.post(second, serverKnown: true)
        #expect(replaced == [.notify(second, replacing: 7)])
        let another = book.post(other, serverKnown: true)
        #expect(another == [.notify(other, replacing: 0)], "another kind has its own bubble")
    }

    @Test func postsWhileOneIsUnderWayCoalesceIntoTheNewest() throws {
        var book = NotificationSlots()
        let one = alert(.notice, "one"), two = alert(.notice, "two"), three = alert(.notice, "three")
        let steps = [book.post(one, serverKnown: true), book.post(two, serverKnown: true), book.post(three, serverKnown: true)]
        #expect(steps.map(\.count) == [1, 0, 0])
        let answered = book.answered(.notice, previousID: 0, id: 3)
        let answer = try #require(answered)
        #expect(answer.next == three, "the middle one is superseded")
        let stray = book.answered(.locationOff, previousID: 0, id: 9)
        #expect(stray == nil, "no Notify of that kind was under way")
    }

    @Test func withoutAServerTheNewestOfEachKindWaitsInTheOrderTheKindsFirstWaited() {
        var book = NotificationSlots()
        let steps = [book.post(alert(.loggedOut, "waiting"), serverKnown: false), book.post(alert(.locationDenied, "denied"), serverKnown: false),
                     book.post(alert(.loggedOut, "newest"), serverKnown: false)]
        #expect(steps.map(\.count) == [0, 0, 0])
        #expect(book.waitingAlerts.map(\.body) == ["newest", "denied"])
        // Closed while waiting: never shown.
        let closing = book.close(.locationDenied)
        #expect(closing.isEmpty)
        let taken = book.takeWaiting()
        #expect(taken.map(\.body) == ["newest"])
        #expect(book.waitingAlerts.isEmpty)
    }

    @Test func ourOwnCloseIsNeverTheUsersDismissalAndOthersBubblesAreNotOurs() {
        var book = NotificationSlots()
        _ = book.post(alert(.credentials, "ours"), serverKnown: true)
        _ = book.answered(.credentials, previousID: 0, id: 7)
        let closing = book.close(.credentials)
        #expect(closing == [.close(7)])
        // UKUI reports our close as a dismissal (2): it is ours all the same.
        let ours = book.closed(7, code: 2)
        #expect(ours?.0 == .credentials && ours?.1 == .closedByCall)
        let theirs = book.closed(99, code: 2)
        #expect(theirs == nil, "another program's bubble")
        _ = book.post(alert(.notice, "dismissed"), serverKnown: true)
        _ = book.answered(.notice, previousID: 0, id: 8)
        let dismissed = book.closed(8, code: 2)
        #expect(dismissed?.1 == .dismissed, "the user's own dismissal")
    }

    @Test func aCloseWhileTheNotifyIsUnderWayClosesItWhenShown() throws {
        var book = NotificationSlots()
        _ = book.post(alert(.loggedOut, "acknowledged in the tray"), serverKnown: true)
        let closing = book.close(.loggedOut)
        #expect(closing.isEmpty)
        let answered = book.answered(.loggedOut, previousID: 0, id: 9)
        let answer = try #require(answered)
        #expect(answer.delivered == 9 && answer.close == [.close(9)] && answer.next == nil)
    }

    @Test func aServerThatGoesTakesItsIdsAndWhatWasToFollowWaits() {
        var book = NotificationSlots()
        _ = book.post(alert(.notice, "on its way"), serverKnown: true)
        _ = book.post(alert(.notice, "to follow"), serverKnown: true)
        book.forgetServer()
        #expect(book.waitingAlerts.map(\.body) == ["to follow"])
        let late = book.answered(.notice, previousID: 0, id: 4)
        #expect(late == nil, "the old server's answer means nothing")
        let fresh = alert(.notice, "new server")
        let steps = book.post(fresh, serverKnown: true)
        #expect(steps == [.notify(fresh, replacing: 0)])
    }

    @Test func bubblesOfAnEarlierRunAreAdoptedWhenAServerIsThere() {
        var book = NotificationSlots()
        book.adopt(.credentials, shownAs: 5, serverKnown: false)
        book.adopt(.notSetUp, shownAs: 6, serverKnown: false)
        // Closed before the server is known: the close goes to whoever owns the name.
        let closing = book.close(.notSetUp)
        #expect(closing == [.close(6)])
        book.ownerKnown(first: true, present: true)
        let now = alert(.credentials, "this run")
        let steps = book.post(now, serverKnown: true)
        #expect(steps == [.notify(now, replacing: 5)])
        let click = book.action(on: 5)
        #expect(click?.0 == .credentials, "its clicks are this run's")

        var alone = NotificationSlots()
        alone.adopt(.credentials, shownAs: 5, serverKnown: false)
        alone.ownerKnown(first: true, present: false)
        let later = alert(.credentials, "no server then")
        let fresh = alone.post(later, serverKnown: true)
        #expect(fresh == [.notify(later, replacing: 0)], "no server at start: the old id belongs to no one")
    }

    @Test func anActivationTokenGoesWithTheActionThatFollowsIt() {
        var book = NotificationSlots()
        _ = book.post(alert(.loggedOut, "kicked"), serverKnown: true)
        _ = book.answered(.loggedOut, previousID: 0, id: 7)
        book.activationToken("token-123", for: 7)
        book.activationToken("forged", for: 99)
        let first = book.action(on: 7), second = book.action(on: 7), forged = book.action(on: 99)
        #expect(first?.token == "token-123")
        #expect(second != nil && second?.token == nil, "a token is used once")
        #expect(forged == nil)
    }
}
