/** Counts work in progress, so a shutdown can wait for it to finish (within a limit). */
export class InFlight {
  private count = 0;
  private readonly waiters = new Set<() => void>();

  get size(): number {
    return this.count;
  }

  /** Marks one piece of work as started; call the returned function exactly once when it ends. */
  enter(): () => void {
    this.count++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.count--;
      if (this.count === 0) for (const w of this.waiters) w();
    };
  }

  /** Resolves true once nothing is in flight, or false after `withinMs`. */
  idle(withinMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(onIdle);
        resolve(ok);
      };
      const onIdle = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, withinMs));
      this.waiters.add(onIdle);
    });
  }
}
