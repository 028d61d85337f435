/**
 * How far a streamed JSON text (a tool call's input or arguments, arriving in fragments) has got towards one complete
 * value: `complete` once the value that opened with `{` (or `[`) has closed; `invalid` when it opened with anything
 * else (then only the stream's own end part completes it). Renderers that must not interleave a tool's fragments with
 * other output hold that output back until the scan completes.
 */
export interface JsonValueScan {
  state: 'before' | 'inside' | 'complete' | 'invalid';
  depth: number;
  inString: boolean;
  escaped: boolean;
}

/**
 * A fresh scan, before the first fragment.
 *
 * @example
 * const scan = createJsonValueScan();
 * advanceJsonValueScan(scan, '{"city": "Par');
 * advanceJsonValueScan(scan, 'is"}'); // scan.state === 'complete'
 */
export function createJsonValueScan(): JsonValueScan {
  return { state: 'before', depth: 0, inString: false, escaped: false };
}

/** Advances `scan` over one fragment: linear in the fragment, strings and escapes taken into account. */
export function advanceJsonValueScan(scan: JsonValueScan, text: string): void {
  for (let index = 0; index < text.length; index++) {
    if (scan.state === 'complete' || scan.state === 'invalid') return;
    const code = text.charCodeAt(index);
    if (scan.state === 'before') {
      if (code === 32 || code === 10 || code === 13 || code === 9) continue;
      scan.state = code === 123 /* { */ || code === 91 /* [ */ ? 'inside' : 'invalid';
      scan.depth = 1;
    } else if (scan.inString) {
      if (scan.escaped) scan.escaped = false;
      else if (code === 92 /* \ */) scan.escaped = true;
      else if (code === 34 /* " */) scan.inString = false;
    } else if (code === 34) {
      scan.inString = true;
    } else if (code === 123 || code === 91) {
      scan.depth++;
    } else if ((code === 125 /* } */ || code === 93) /* ] */ && --scan.depth === 0) {
      scan.state = 'complete';
    }
  }
}
