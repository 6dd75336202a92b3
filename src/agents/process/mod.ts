/**
 * Child processes: spawning in their own process group, ending groups, and the watchdog and
 * record that keep children from outliving the gateway.
 */
export {};
