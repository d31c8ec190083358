//! The Lua transitions of the Redis queue. Each runs atomically on the shard's slot with
//! the same eight keys (`KEYS[1..8]`: stream, state, dirty, delayed, attempts, seq,
//! reclaim cursor, trace contexts) and
//! Redis's own clock (`TIME`), so the appliers' clocks never disagree about due times.
//!
//! Key states (the `state` hash): absent (idle), `w:<id>` (entry `<id>` waits in the
//! stream), `h:<id>:<nonce>:<consumer>` (held under lease `<id>:<nonce>`), `d` (waiting in
//! `delayed` for its retry time).
//!
//! Trace contexts: a waiting key's rides in its stream entry (field `ctx`, absent when
//! none), so coalesced enqueues keep the first; the `contexts` hash holds the one a
//! key carries next while it is held (its dirty re-run's, the first enqueue during the
//! reconcile) or delayed (the failed job's, or a later enqueue's).

use std::sync::LazyLock;

use redis::Script;

/// Shared by every script.
const PRELUDE: &str = r#"
local stream, state, dirty, delayed, attempts, seq, cursor_key, contexts = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function push(key, ctx)
  local id
  if ctx and ctx ~= '' then
    id = redis.call('XADD', stream, '*', 'key', key, 'ctx', ctx)
  else
    id = redis.call('XADD', stream, '*', 'key', key)
  end
  redis.call('HSET', state, key, 'w:' .. id)
  return id
end
-- The context kept for `key`'s next job, taken out of the hash.
local function take_context(key)
  local ctx = redis.call('HGET', contexts, key)
  if ctx then redis.call('HDEL', contexts, key) end
  return ctx
end
local function keep_context(key, ctx)
  if ctx and ctx ~= '' then
    redis.call('HSET', contexts, key, ctx)
  else
    redis.call('HDEL', contexts, key)
  end
end
-- The lease `id:nonce` of `key`, if it still holds: the holder's consumer name.
local function holder(key, id, nonce)
  local s = redis.call('HGET', state, key)
  local prefix = 'h:' .. id .. ':' .. nonce .. ':'
  if s and string.sub(s, 1, #prefix) == prefix then
    return string.sub(s, #prefix + 1)
  end
  return nil
end
-- The lease's stream entry is done with: out of the pending list and out of memory.
local function drop_entry(group, id)
  redis.call('XACK', stream, group, id)
  redis.call('XDEL', stream, id)
end
"#;

fn script(body: &str) -> Script {
    Script::new(&format!("{PRELUDE}{body}"))
}

/// ARGV: key, trace context (empty: none). Returns 1 when the key was queued, 0 when
/// coalesced with a waiting one, 2 when marked dirty (held).
pub(super) static ENQUEUE: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local key, ctx = ARGV[1], ARGV[2]
local s = redis.call('HGET', state, key)
if not s then
  push(key, ctx)
  return 1
end
local kind = string.sub(s, 1, 1)
if kind == 'w' then
  return 0
end
if kind == 'd' then
  -- New information beats the backoff: due now, failure count kept, its trace.
  redis.call('ZREM', delayed, key)
  redis.call('HDEL', contexts, key)
  push(key, ctx)
  return 1
end
-- The first enqueue during the reconcile gives the dirty re-run its context.
if redis.call('SADD', dirty, key) == 1 then
  keep_context(key, ctx)
end
return 2
"#,
    )
});

/// ARGV: group, consumer, lease (ms), and optionally a minimum age (ms) a new entry
/// must have waited to be handed out. Promotes due retries, then hands out a reclaimed
/// entry (idle longer than the lease) or a new one. Returns `{1, key, token, attempt,
/// trace context or ''}` or `{0, last entry id}` (for the caller's wake-up read).
pub(super) static TAKE: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local group, consumer, lease = ARGV[1], ARGV[2], ARGV[3]
-- A consumer that does not prefer this shard's management clusters takes an entry only
-- once it has waited this long (0: at once).
local min_age = tonumber(ARGV[4] or '0') or 0
local now = now_ms()
local due = redis.call('ZRANGEBYSCORE', delayed, '-inf', now, 'LIMIT', 0, 100)
for _, key in ipairs(due) do
  redis.call('ZREM', delayed, key)
  push(key, take_context(key))
end
local function hold(id, fields)
  local key = nil
  local ctx = ''
  if type(fields) == 'table' then
    for i = 1, #fields - 1, 2 do
      if fields[i] == 'key' then key = fields[i + 1] end
      if fields[i] == 'ctx' then ctx = fields[i + 1] end
    end
  end
  local s = key and redis.call('HGET', state, key)
  if s and (s == 'w:' .. id or string.sub(s, 1, #id + 3) == 'h:' .. id .. ':') then
    local nonce = redis.call('INCR', seq)
    redis.call('HSET', state, key, 'h:' .. id .. ':' .. nonce .. ':' .. consumer)
    -- Reclaimed: the reconcile starting now covers the enqueues of the lost one.
    redis.call('SREM', dirty, key)
    redis.call('HDEL', contexts, key)
    local attempt = tonumber(redis.call('HGET', attempts, key) or '0')
    return {1, key, id .. ':' .. nonce, attempt, ctx}
  end
  -- An entry no key points at any more (cannot happen through these scripts; tolerated).
  drop_entry(group, id)
  return nil
end
-- The reclaim scan resumes where the last take left it, so a long pending list is swept
-- over successive takes instead of only its head being looked at; the cursor is written
-- only when it moves, so idle polls write nothing.
local saved = redis.call('GET', cursor_key) or '0-0'
local cursor = saved
local function save()
  if cursor ~= saved then
    if cursor == '0-0' then redis.call('DEL', cursor_key) else redis.call('SET', cursor_key, cursor) end
  end
end
for _ = 1, 16 do
  local r = redis.call('XAUTOCLAIM', stream, group, consumer, lease, cursor, 'COUNT', 1)
  cursor = r[1]
  for _, e in ipairs(r[2]) do
    if type(e) == 'table' then
      local job = hold(e[1], e[2])
      if job then
        save()
        return job
      end
    end
  end
  if cursor == '0-0' then break end
end
save()
-- Whether the entry XREADGROUP would hand out next has waited `min_age` (its id is
-- the time it was added, by this clock).
local function aged()
  if min_age <= 0 then return true end
  local delivered = '0-0'
  for _, info in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local name, last = nil, nil
    for i = 1, #info - 1, 2 do
      if info[i] == 'name' then name = info[i + 1] end
      if info[i] == 'last-delivered-id' then last = info[i + 1] end
    end
    if name == group and last then delivered = last end
  end
  local next_entry = redis.call('XRANGE', stream, '(' .. delivered, '+', 'COUNT', 1)
  if #next_entry == 0 then return false end
  local added = tonumber(string.match(next_entry[1][1], '^(%d+)'))
  return added ~= nil and now - added >= min_age
end
for _ = 1, 16 do
  if not aged() then break end
  local r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', 1, 'STREAMS', stream, '>')
  if not r or not r[1] or #r[1][2] == 0 then break end
  local e = r[1][2][1]
  local job = hold(e[1], e[2])
  if job then return job end
end
local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
if #last > 0 then
  return {0, last[1][1]}
end
return {0, '0-0'}
"#,
    )
});

/// ARGV: group, key, entry id, nonce. Returns 0 when the lease is lost, 1 when the key is
/// done, 2 when it was queued again (dirty).
pub(super) static ACK: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local group, key, id, nonce = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if not holder(key, id, nonce) then return 0 end
drop_entry(group, id)
redis.call('HDEL', attempts, key)
if redis.call('SREM', dirty, key) == 1 then
  push(key, take_context(key))
  return 2
end
redis.call('HDEL', state, key)
redis.call('HDEL', contexts, key)
return 1
"#,
    )
});

/// ARGV: group, key, entry id, nonce, delay (ms), the job's trace context (kept for the
/// retry; empty: none). Returns 0 when the lease is lost, 1 when the key waits for its
/// retry time, 2 when it was queued again at once (dirty).
pub(super) static RETRY: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local group, key, id, nonce, delay, ctx = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5]), ARGV[6]
if not holder(key, id, nonce) then return 0 end
drop_entry(group, id)
redis.call('HINCRBY', attempts, key, 1)
if redis.call('SREM', dirty, key) == 1 then
  push(key, take_context(key))
  return 2
end
keep_context(key, ctx)
redis.call('ZADD', delayed, now_ms() + delay, key)
redis.call('HSET', state, key, 'd')
return 1
"#,
    )
});

/// ARGV: group, key, entry id, nonce, delay (ms). Done, but the key comes back after the
/// delay with its attempts cleared (no trace context is kept: the next look is a new
/// reconcile). Returns 0 when the lease is lost, 1 when the key waits for its time, 2
/// when it was queued again at once (dirty).
pub(super) static ACK_AFTER: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local group, key, id, nonce, delay = ARGV[1], ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[5])
if not holder(key, id, nonce) then return 0 end
drop_entry(group, id)
redis.call('HDEL', attempts, key)
if redis.call('SREM', dirty, key) == 1 then
  push(key, take_context(key))
  return 2
end
redis.call('HDEL', contexts, key)
redis.call('ZADD', delayed, now_ms() + delay, key)
redis.call('HSET', state, key, 'd')
return 1
"#,
    )
});

/// ARGV: group, key, entry id, nonce. Resets the entry's idle time (what XAUTOCLAIM
/// measures the lease by). Returns 0 when the lease is lost, 1 otherwise.
pub(super) static EXTEND: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local group, key, id, nonce = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local consumer = holder(key, id, nonce)
if not consumer then return 0 end
redis.call('XCLAIM', stream, group, consumer, 0, id, 'JUSTID')
return 1
"#,
    )
});

/// ARGV: group. Returns `{depth, delayed, in flight, oldest waiting (ms, -1 if none), now
/// (ms)}`.
pub(super) static STATS: LazyLock<Script> = LazyLock::new(|| {
    script(
        r#"
local group = ARGV[1]
local now = now_ms()
local length, pending, oldest = 0, 0, -1
if redis.call('EXISTS', stream) == 1 then
  length = redis.call('XLEN', stream)
  local delivered = '0-0'
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local fields = {}
    for i = 1, #g - 1, 2 do fields[g[i]] = g[i + 1] end
    if fields['name'] == group then
      pending = fields['pending']
      delivered = fields['last-delivered-id']
    end
  end
  local start = '-'
  if delivered ~= '0-0' then start = '(' .. delivered end
  local first = redis.call('XRANGE', stream, start, '+', 'COUNT', 1)
  if #first > 0 then
    oldest = tonumber(string.match(first[1][1], '^(%d+)-'))
  end
end
local total = redis.call('ZCARD', delayed)
local due = redis.call('ZCOUNT', delayed, '-inf', now)
if due > 0 then
  local earliest = redis.call('ZRANGE', delayed, 0, 0, 'WITHSCORES')
  local score = tonumber(earliest[2])
  if oldest < 0 or score < oldest then oldest = score end
end
return {length - pending + due, total - due, pending, oldest, now}
"#,
    )
});
