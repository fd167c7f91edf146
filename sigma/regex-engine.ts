import v8 from 'node:v8';

/**
 * V8 runs a regex whose backtracking passes a threshold on its linear-time engine instead (for the
 * patterns that engine supports: no backreferences or lookarounds, which `analyseRegex` flags
 * anyway). `analyseRegex` catches the usual catastrophic shapes before a pattern runs, but not
 * every one (`(\x61|a)+$`, `a*a*a*b`); with this, none of them can stall the process. The flag is
 * process-wide and read when a regex runs, so setting it once, before any rule is evaluated, is
 * enough; it changes no result, only how a match is found.
 */
v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
