package redislimit

// gcraScript decides for one key, atomically: GCRA, the token bucket of ratelimit.Rate kept as
// the key's theoretical arrival time (TAT), when its quota will be whole again.
//
// KEYS[1] holds the TAT, in whole microseconds of Unix time on Redis's clock (TIME), and
// expires then. ARGV[1] is the interval between requests and ARGV[2] the tolerance (burst ×
// interval), in microseconds; ARGV[3] is "1" to take a request (Allow), "0" to only look
// (Peek).
//
// ahead = TAT - now, clamped to [0, tolerance], is the time to regain the whole quota. A
// request is allowed when ahead + interval <= tolerance; taking it moves the TAT on by
// interval. A denied request and a Peek write nothing.
//
// The script returns one integer: ahead after the decision when the request is allowed, and
// -1 - ahead when it is not; the Limiter derives the Decision from it (decision). Lua numbers
// are float64, exact for integers up to 2⁵³: Unix time in microseconds stays below 2⁵³ until
// the year 2255, and the TAT is written with %d, never in the exponent form Lua gives numbers.
// It needs Redis 5 or later, which replicates a script's writes, not the script, so that a
// write may follow TIME.
const gcraScript = `
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local now = redis.call('TIME')
now = now[1] * 1000000 + now[2]

local ahead = 0
local tat = redis.call('GET', KEYS[1])
if tat then
	tat = tonumber(tat)
	if not tat then
		return redis.error_reply('redislimit: ' .. KEYS[1] .. ' holds no timestamp')
	end
	ahead = tat - now
	if ahead < 0 then
		ahead = 0
	elseif ahead > tolerance then
		-- Redis's clock went back (a failover to a server whose clock is behind): wait no
		-- longer than a whole quota takes.
		ahead = tolerance
	end
end

if ahead + interval > tolerance then
	return -1 - ahead
end
if ARGV[3] == '1' then
	ahead = ahead + interval
	redis.call('SET', KEYS[1], string.format('%d', now + ahead), 'PX', math.ceil(ahead / 1000))
end
return ahead
`
