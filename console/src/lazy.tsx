import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Draws its children when they come near the viewport, and the rest a few at a time while the
 * browser is idle: a long list paints its first screenful without drawing every chart and diff
 * first, and is complete (searchable, printable) shortly after. One observer serves every instance.
 */
const waiting = new Map<Element, () => void>();
let observer: IntersectionObserver | null = null;
let idle = false;
const PER_IDLE = 12;
/** `?eager` draws everything at once: the bench's same-run baseline (bench/console.ts). */
const EAGER = new URLSearchParams(location.search).has('eager');

function reveal(el: Element) {
  const show = waiting.get(el);
  if (!show) return;
  waiting.delete(el);
  observer?.unobserve(el);
  show();
}

function fillWhenIdle() {
  if (idle || waiting.size === 0) return;
  idle = true;
  const next = (cb: () => void) => (typeof requestIdleCallback === 'function' ? requestIdleCallback(cb, { timeout: 200 }) : setTimeout(cb, 50));
  next(() => {
    idle = false;
    // In the order they were placed, top of the page first.
    let n = 0;
    for (const el of waiting.keys()) {
      if (n++ >= PER_IDLE) break;
      reveal(el);
    }
    fillWhenIdle();
  });
}

export function Lazy({ children, minHeight }: { children: () => ComponentChildren; minHeight: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const [shown, setShown] = useState(EAGER);
  useEffect(() => {
    const el = ref.current;
    if (!el || shown) return;
    waiting.set(el, () => setShown(true));
    observer ??= new IntersectionObserver((entries) => entries.forEach((e) => e.isIntersecting && reveal(e.target)), { rootMargin: '50% 0px' });
    observer.observe(el);
    fillWhenIdle();
    return () => {
      waiting.delete(el);
      observer?.unobserve(el);
    };
  }, [shown]);
  return shown ? <>{children()}</> : <div ref={ref} class="lazy" style={{ minHeight: `${minHeight}px` }} aria-hidden="true" />;
}
