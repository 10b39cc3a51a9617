"""In-process event delivery to SSE tails (deepresearch/service/notifier.py): what a tail may take from
memory and when it must read the log instead. The streams over real HTTP are in test_runner_api.py and
test_live_server.py; these pin the rules they rely on."""

from __future__ import annotations

from deepresearch.service.notifier import EventNotifier, Subscription
from deepresearch.store import EventRecord


def event(seq: int, run_id: str = "r1") -> EventRecord:
    return EventRecord(
        run_id=run_id, seq=seq, type="message", stage=None, ts="2026-12-01T00:00:00+00:00", data={}
    )


def test_events_handed_over_in_order_are_taken_once() -> None:
    notifier = EventNotifier()
    with notifier.subscribe("r1") as tail, notifier.subscribe("r2") as other:
        for seq in (1, 2, 3):
            notifier.publish(event(seq))
        assert tail.wake.is_set() and not other.wake.is_set()
        assert [e.seq for e in tail.take(0) or []] == [1, 2, 3]
        assert tail.take(3) == []  # nothing new: wait, do not read the log
        notifier.publish(event(4))
        assert [e.seq for e in tail.take(3) or []] == [4]
    assert notifier._subscribers == {}  # a tail that leaves leaves nothing behind
    # a tail that already replayed 1..3 from the log skips what it has
    tail = Subscription()
    for seq in (2, 3, 4):
        tail.push(event(seq))
    assert [e.seq for e in tail.take(3) or []] == [4]


def test_a_gap_an_overflow_or_a_bare_wake_up_sends_the_tail_to_the_log() -> None:
    tail = Subscription()
    tail.push(event(5))
    assert tail.take(3) is None  # 4 is missing here (appended out of order, or before subscribing)
    tail = Subscription(limit=2)
    for seq in (1, 2, 3):
        tail.push(event(seq))
    assert tail.take(0) is None and tail.take(0) == []  # fell behind once: read the log, then go on
    tail = Subscription()
    tail.poke()  # another replica appended something (NOTIFY without a seq)
    assert tail.take(0) is None


def test_the_echo_of_an_event_handed_over_is_ignored() -> None:
    notifier = EventNotifier()
    with notifier.subscribe("r1") as tail:
        notifier.publish(event(1))
        notifier.notify("r1 1")  # PostgreSQL's NOTIFY of the same append comes back
        assert [e.seq for e in tail.take(0) or []] == [1]
        notifier.notify("r1 2")  # a newer one from another replica: the log has it
        assert tail.take(1) is None
        notifier.notify("r1")  # an old replica's payload (no seq)
        assert tail.take(1) is None
        notifier.notify("unknown 3")  # nobody follows that run: nothing happens
