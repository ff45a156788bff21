package redislimit

// gcraScript decides for one key, atomically: GCRA, the token bucket of ratelimit.Rate kept as
// the key's theoretical arrival time (TAT), when its quota will be whole again.
//
// KEYS[1] holds the TAT as "<seconds>.<nanoseconds>" (Unix time, Redis's clock), and expires
// then. ARGV[1] is the interval between requests and ARGV[2] the tolerance (burst × interval),
// in nanoseconds; ARGV[3] is "1" to take a request (Allow), "0" to only look (Peek).
//
// ahead = TAT - now, clamped to [0, tolerance], is the time to regain the whole quota; the key
// holds (tolerance - ahead) / interval requests. A request is allowed when one is held, that is
// when ahead + interval <= tolerance; taking it moves the TAT on by interval. A denied request
// and a Peek write nothing.
//
// Lua numbers are float64. The script only computes with differences of times (ahead, at most
// MaxTolerance = 2⁵² ns), which are exact; absolute times are kept as whole seconds and
// nanoseconds, both exact, and written with %d.
//
// It returns {allowed (1 or 0), remaining, retry after (ns), reset (ns)}.
const gcraScript = `
-- Redis 3.2 and 4 replicate scripts verbatim unless told to replicate their effects, and then
-- refuse a write after TIME; Redis 5 and later replicate effects always.
if redis.replicate_commands then redis.replicate_commands() end

local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local now = redis.call('TIME')
local now_s = tonumber(now[1])
local now_ns = tonumber(now[2]) * 1000

local ahead = 0
local tat = redis.call('GET', KEYS[1])
if tat then
	local s, ns = string.match(tat, '^(%d+)%.(%d+)$')
	if not s then
		return redis.error_reply('redislimit: ' .. KEYS[1] .. ' holds no timestamp')
	end
	ahead = (tonumber(s) - now_s) * 1e9 + (tonumber(ns) - now_ns)
	if ahead < 0 then
		ahead = 0
	elseif ahead > tolerance then
		-- Redis's clock went back (a failover to a server whose clock is behind): wait no
		-- longer than a whole quota takes.
		ahead = tolerance
	end
end

local allowed = ahead + interval <= tolerance
if allowed and ARGV[3] == '1' then
	ahead = ahead + interval
	local t = now_ns + ahead
	local ns = math.fmod(t, 1e9)
	redis.call('SET', KEYS[1], string.format('%d.%09d', now_s + (t - ns) / 1e9, ns),
		'PX', string.format('%d', math.ceil(ahead / 1e6)))
end

local retry = 0
if not allowed then
	retry = ahead + interval - tolerance
end
return {allowed and 1 or 0, math.floor((tolerance - ahead) / interval), retry, ahead}
`
