import { bail } from './fast-unsupported';

/** Single- and double-quoted scalars on one line: where a token ends, and its value. */

export function singleQuotedEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    if (text[i] === "'") {
      if (text[i + 1] === "'") i++;
      else return i;
    }
  }
  return -1;
}

export function doubleQuotedEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/** Value of a complete quoted scalar token (including its quotes). */
export function quoted(token: string): string {
  const body = token.slice(1, -1);
  if (token[0] === "'") return body.includes("''") ? body.replace(/''/g, "'") : body;
  if (!body.includes('\\')) return body;
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = body[++i];
    switch (e) {
      case '\\':
        out += '\\';
        break;
      case '"':
        out += '"';
        break;
      case '/':
        out += '/';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case '0':
        out += '\0';
        break;
      case ' ':
        out += ' ';
        break;
      case 'x':
        out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16));
        i += 2;
        break;
      case 'u':
        out += String.fromCharCode(parseInt(body.slice(i + 1, i + 5), 16));
        i += 4;
        break;
      default:
        bail();
    }
  }
  return out;
}
