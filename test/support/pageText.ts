import type { Page } from 'playwright-core';

/** What these helpers touch of the page's DOM (the project compiles without the DOM lib). */
interface PageGlobals {
  document: { querySelector(selector: string): { textContent: string | null } | null };
}

/** The text an element shows ('' when there is none such). */
export async function textOf(page: Page, selector: string): Promise<string> {
  return page.evaluate((sel) => (globalThis as unknown as PageGlobals).document.querySelector(sel)?.textContent ?? '', selector);
}

/**
 * Waits until the element `selector` shows text that `wanted` matches (a
 * substring or a RegExp), as the page renders what the server sent. The
 * deadline guards against a hang; it is no timing assertion. Failing, it
 * says what the element showed instead. (Functions, not strings, are
 * evaluated: the page's Content-Security-Policy forbids eval.)
 */
export async function waitForText(page: Page, selector: string, wanted: string | RegExp, deadlineMs = 15_000): Promise<string> {
  const arg = { selector, text: typeof wanted === 'string' ? wanted : undefined, source: typeof wanted === 'string' ? undefined : wanted.source, flags: typeof wanted === 'string' ? '' : wanted.flags };
  try {
    await page.waitForFunction(
      (a) => {
        const t = (globalThis as unknown as PageGlobals).document.querySelector(a.selector)?.textContent ?? '';
        return a.text !== undefined ? t.includes(a.text) : new RegExp(a.source as string, a.flags).test(t);
      },
      arg,
      { timeout: deadlineMs, polling: 20 },
    );
  } catch (err) {
    throw new Error(`the page never showed ${String(wanted)} in ${selector}: it shows "${await textOf(page, selector).catch(() => '?')}"`, { cause: err });
  }
  return textOf(page, selector);
}

/** The CSS selector of a key's row in the key list. */
export const keyRow = (key: string): string => `#keys tr[data-key=${JSON.stringify(key)}]`;
