/** council-gateway entry point. */
console.log("council-gateway: not yet runnable");
