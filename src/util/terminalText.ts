/**
 * Text from a recording, a server or a user's module, made safe to print
 * on a terminal: kubectl's answer to CVE-2021-25743 (its printers'
 * `EscapeTerminal` writes ESC as `^[` and CR as `\r`), extended to every
 * other control character, which a terminal would act on rather than show
 * (BEL rings, BS rewrites). C0 controls and DEL are written in the same
 * caret notation as ESC (`^G`, `^?`), C1 controls as `\u009b`; newline and
 * tab are kept, so that text keeps its lines.
 */
export function escapeTerminal(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => {
    const code = c.charCodeAt(0);
    if (c === '\r') return '\\r';
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
    if (code === 0x7f) return '^?';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
