/**
 * Planning a turn: whether to fan out, which agents answer, the fan-out judge and the
 * synthesizers' order.
 */
export {};
