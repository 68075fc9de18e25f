//! `serve`'s connection slots: who holds one, and who gives one up when they are all taken.
//!
//! A connection holds a slot from the moment it is accepted until it closes; there are
//! `max_connections` of them, and one client holds at most `max_connections_per_client` (its
//! fair share). A connection that finds no slot is not parked in the listen backlog, where a
//! client would wait without a word for as long as the holders like: it is answered `503` at
//! once (see [`super::turn_away`]).
//!
//! Holding a slot costs a client nothing while it sends no request, so a slot is safe only
//! while a request of its own is being served. When a new connection finds its client at
//! its share, that client's connection waiting longest for a request head gives its slot up
//! to the newcomer (and is answered `503`); when it finds every slot taken, the longest
//! waiting of all does. Waiting means: it never sent a head, it is trickling one a byte at a
//! time, or it is kept alive between requests. A connection younger than [`YOUNG`] is left
//! alone, so that a newcomer has the time to send its head — which every real client sends
//! as it connects — and is safe from then on. Idle or trickling connections, from one
//! address or from a thousand, therefore cannot keep a client out: they only take turns
//! being the oldest. Only a flood that opens connections faster than the slots' number every
//! [`YOUNG`] gets newcomers answered `503`, and it is answered at once. Each waiting
//! connection is also closed once the head timeout is up, whatever it sent meanwhile (hyper's
//! `header_read_timeout` is one deadline for the whole head, not a wait between bytes).
//!
//! Slots bound open connections (each a file, and a few KiB); how many requests are read and
//! served at once, each holding its body, is `max_requests`, checked when a head is in.
//!
//! The table is a list searched from end to end for an eviction: it holds `max_connections`
//! entries, and the search is made only when a client or the whole table is full.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// How long a new connection is safe from eviction: ample for a client to send the head it
/// writes as it connects, short enough that a flood must open a slot's worth of connections
/// this often to keep newcomers out.
pub const YOUNG: Duration = Duration::from_millis(100);

/// Who counts as one client for the per-client cap: an IPv4 address (an IPv4 client of a
/// dual-stack listener included), or an IPv6 /64 — the block one host or one subscriber is
/// given, which it can fill with as many addresses as it likes.
pub(crate) fn client_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None if v6.is_loopback() => ip,
            None => {
                let bits = u128::from(v6) & !u128::from(u64::MAX);
                IpAddr::V6(bits.into())
            }
        },
    }
}

/// The slots and their holders.
pub(crate) struct Slots {
    max: usize,
    per_client: usize,
    table: Mutex<Table>,
}

struct Table {
    next_id: u64,
    held: Vec<Held>,
    per_client: HashMap<IpAddr, usize>,
}

struct Held {
    id: u64,
    client: IpAddr,
    conn: Arc<Conn>,
}

/// What a connection's task and the table share.
pub(crate) struct Conn {
    /// Since when it waits for a request head; `None` while a request is served.
    waiting_since: Mutex<Option<Instant>>,
    /// Told when the connection must give its slot up.
    evicted: Notify,
}

/// The answer to a new connection.
pub(crate) enum Admission {
    /// It holds a slot (another, evicted, may have given it up).
    Admitted(Slot),
    /// Its client holds its share of the slots already.
    ClientFull,
    /// Every slot is taken by a connection whose request is being served.
    Full,
}

impl Slots {
    /// `max` slots, at most `per_client` of them for one client (both at least 1).
    pub(crate) fn new(max: usize, per_client: usize) -> Arc<Slots> {
        let max = max.max(1);
        Arc::new(Slots {
            max,
            per_client: per_client.clamp(1, max),
            table: Mutex::new(Table {
                next_id: 0,
                held: Vec::with_capacity(max),
                per_client: HashMap::new(),
            }),
        })
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table is consistent after each statement that changes it: a panic elsewhere
        // while it was held leaves nothing half-done.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A slot for a connection from `ip` accepted at `now`, if it may have one.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr, now: Instant) -> Admission {
        let client = client_of(ip);
        let mut t = self.table();
        if t.per_client.get(&client).copied().unwrap_or(0) >= self.per_client {
            if !t.evict_longest_waiting(now, Some(client)) {
                return Admission::ClientFull;
            }
        } else if t.held.len() >= self.max && !t.evict_longest_waiting(now, None) {
            return Admission::Full;
        }
        let id = t.next_id;
        t.next_id += 1;
        let conn = Arc::new(Conn {
            waiting_since: Mutex::new(Some(now)),
            evicted: Notify::new(),
        });
        t.held.push(Held {
            id,
            client,
            conn: Arc::clone(&conn),
        });
        *t.per_client.entry(client).or_insert(0) += 1;
        Admission::Admitted(Slot {
            slots: Arc::clone(self),
            id,
            conn,
        })
    }

    /// How many slots are held.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.table().held.len()
    }
}

impl Table {
    /// Takes the slot of the connection (of `client`, or anyone's) that has waited longest
    /// for a head, if one has waited at least [`YOUNG`], and tells it to go.
    fn evict_longest_waiting(&mut self, now: Instant, client: Option<IpAddr>) -> bool {
        let oldest = (self.held.iter().enumerate())
            .filter(|(_, h)| client.is_none_or(|c| h.client == c))
            .filter_map(|(i, h)| {
                let since = h.conn.waiting_since()?;
                (now.saturating_duration_since(since) >= YOUNG).then_some((since, i))
            })
            .min();
        let Some((_, i)) = oldest else {
            return false;
        };
        let gone = self.held.swap_remove(i);
        self.release(gone.client);
        gone.conn.evicted.notify_one();
        true
    }

    fn release(&mut self, client: IpAddr) {
        if let Some(n) = self.per_client.get_mut(&client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(&client);
            }
        }
    }
}

impl Conn {
    fn since(&self) -> MutexGuard<'_, Option<Instant>> {
        self.waiting_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn waiting_since(&self) -> Option<Instant> {
        *self.since()
    }

    /// Marks a request as being served until the guard is dropped: meanwhile the connection
    /// keeps its slot, and afterwards it waits for its next head from then on.
    pub(crate) fn serving(self: &Arc<Self>) -> Serving {
        *self.since() = None;
        Serving(Arc::clone(self))
    }
}

/// A request being served (see [`Conn::serving`]).
pub(crate) struct Serving(Arc<Conn>);

impl Drop for Serving {
    fn drop(&mut self) {
        *self.0.since() = Some(Instant::now());
    }
}

/// A held slot, given back when dropped.
pub(crate) struct Slot {
    slots: Arc<Slots>,
    id: u64,
    conn: Arc<Conn>,
}

impl Slot {
    /// The connection's shared state, for its requests to mark themselves served.
    pub(crate) fn conn(&self) -> Arc<Conn> {
        Arc::clone(&self.conn)
    }

    /// Resolves when the connection must give its slot up (it is no longer counted then).
    pub(crate) async fn evicted(&self) {
        self.conn.evicted.notified().await;
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut t = self.slots.table();
        // An evicted slot was taken off the table already.
        if let Some(i) = t.held.iter().position(|h| h.id == self.id) {
            let gone = t.held.swap_remove(i);
            t.release(gone.client);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn admitted(a: Admission) -> Slot {
        match a {
            Admission::Admitted(s) => s,
            Admission::ClientFull => panic!("refused: client full"),
            Admission::Full => panic!("refused: full"),
        }
    }

    #[test]
    fn a_client_holds_its_share_and_no_more() {
        let slots = Slots::new(4, 2);
        let t = Instant::now();
        let a1 = admitted(slots.admit(ip("127.0.0.1"), t));
        let a2 = admitted(slots.admit(ip("127.0.0.1"), t));
        // Both its connections are new: the client's third is refused, not theirs.
        assert!(matches!(
            slots.admit(ip("127.0.0.1"), t),
            Admission::ClientFull
        ));
        let _b = admitted(slots.admit(ip("127.0.0.2"), t));
        drop(a1);
        let _a3 = admitted(slots.admit(ip("127.0.0.1"), t));
        assert_eq!(slots.held(), 3);
        drop(a2);
    }

    #[tokio::test]
    async fn a_client_at_its_share_gives_up_its_own_longest_waiting() {
        let slots = Slots::new(8, 2);
        let t = Instant::now();
        let served = admitted(slots.admit(ip("127.0.0.1"), t));
        let _serving = served.conn().serving();
        let idle = admitted(slots.admit(ip("127.0.0.1"), t));
        let other = admitted(slots.admit(ip("127.0.0.2"), t));
        let later = t + YOUNG;
        let _new = admitted(slots.admit(ip("127.0.0.1"), later));
        tokio::time::timeout(Duration::from_secs(1), idle.evicted())
            .await
            .expect("its own idle connection goes");
        assert_eq!(slots.held(), 3);
        // Its remaining two are one being served and one young: refused now.
        assert!(matches!(
            slots.admit(ip("127.0.0.1"), later),
            Admission::ClientFull
        ));
        // The other client's idle connection was never a candidate.
        assert!(
            tokio::time::timeout(Duration::from_millis(50), other.evicted())
                .await
                .is_err()
        );
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64() {
        assert_eq!(client_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(client_of(ip("2001:db8:1:2:ffff::9")), ip("2001:db8:1:2::"));
        assert_ne!(client_of(ip("2001:db8:1:3::1")), ip("2001:db8:1:2::"));
        assert_eq!(client_of(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(client_of(ip("::1")), ip("::1"));
        let slots = Slots::new(8, 1);
        let _a = admitted(slots.admit(ip("2001:db8::1"), Instant::now()));
        assert!(matches!(
            slots.admit(ip("2001:db8::2"), Instant::now()),
            Admission::ClientFull
        ));
    }

    #[tokio::test]
    async fn when_all_are_taken_the_longest_waiting_gives_its_slot_up() {
        let slots = Slots::new(3, 3);
        let t = Instant::now();
        let early = t - Duration::from_secs(9);
        let served = admitted(slots.admit(ip("10.0.0.3"), early));
        let _serving = served.conn().serving();
        let older = admitted(slots.admit(ip("10.0.0.2"), t - Duration::from_secs(2)));
        let old = admitted(slots.admit(ip("10.0.0.1"), t - Duration::from_secs(1)));
        // The one serving a request is kept though it came first; the one waiting longest
        // for a head goes.
        let new = admitted(slots.admit(ip("10.0.0.4"), t));
        tokio::time::timeout(Duration::from_secs(1), older.evicted())
            .await
            .expect("told to go");
        assert_eq!(slots.held(), 3);
        // Given up already: dropping it frees nothing more, and its client is not counted.
        drop(older);
        assert_eq!(slots.held(), 3);
        let again = admitted(slots.admit(ip("10.0.0.2"), t + YOUNG / 2));
        tokio::time::timeout(Duration::from_secs(1), old.evicted())
            .await
            .expect("the next oldest goes next");
        // Left: one serving, two younger than `YOUNG`: a newcomer is refused.
        assert!(matches!(
            slots.admit(ip("10.0.0.5"), t + YOUNG / 2),
            Admission::Full
        ));
        drop((new, again));
    }

    #[test]
    fn when_every_slot_serves_a_request_the_newcomer_is_refused() {
        let slots = Slots::new(2, 2);
        let t = Instant::now();
        let a = admitted(slots.admit(ip("10.0.0.1"), t));
        let b = admitted(slots.admit(ip("10.0.0.2"), t));
        let serving = (a.conn().serving(), b.conn().serving());
        assert!(matches!(slots.admit(ip("10.0.0.3"), t), Admission::Full));
        // A request answered: its connection waits for the next head, and may be evicted
        // once it has waited a while.
        drop(serving);
        let _c = admitted(slots.admit(ip("10.0.0.3"), Instant::now() + YOUNG));
        assert_eq!(slots.held(), 2);
    }
}
