/** Per-event memo of lower-cased field strings, keyed by a slot number assigned at compile time. */
export class LowerCache {
  private generation = 1;
  private readonly gens: number[] = [];
  private readonly values: string[] = [];
  private slots = 0;

  newSlot(): number {
    this.gens.push(0);
    this.values.push('');
    return this.slots++;
  }
  nextEvent(): void {
    this.generation++;
  }
  lower(slot: number, s: string): string {
    if (this.gens[slot] === this.generation) return this.values[slot]!;
    const l = s.toLowerCase();
    this.gens[slot] = this.generation;
    this.values[slot] = l;
    return l;
  }
}
