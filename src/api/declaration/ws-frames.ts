// SPEC §6 WebSocket frames as JSON Schemas: the declaration attaches them to GET /v1/ws
// (`x-websocket-frames`), since OpenAPI has no words for a socket's messages.

/** SPEC §6 frames, as JSON Schemas: documented on GET /v1/ws. */
export const WS_FRAMES = {
  client: {
    subscribe: { type: "object", required: ["type", "channel"], properties: { type: { const: "subscribe" }, channel: { type: "string", description: "book:<market_id>, trades:<market_id> or user:<addr>" }, signature: { type: "string", description: "user: channels without the cookie: hex Ed25519 over the session message" }, timestamp: { type: "integer" } } },
    unsubscribe: { type: "object", required: ["type", "channel"], properties: { type: { const: "unsubscribe" }, channel: { type: "string" } } },
    ping: { type: "object", required: ["type"], properties: { type: { const: "ping" } } }
  },
  server: {
    subscribed: { type: "object", properties: { type: { const: "subscribed" }, channel: { type: "string" } } },
    unsubscribed: { type: "object", properties: { type: { const: "unsubscribed" }, channel: { type: "string" } } },
    pong: { type: "object", properties: { type: { const: "pong" }, ts: { type: "integer", description: "unix ms" } } },
    book_update: { type: "object", properties: { type: { const: "book_update" }, market_id: { type: "string" }, snapshot: { type: "object", properties: { market_id: { type: "string" }, bids: { type: "array", items: { type: "object", properties: { price: { type: "integer" }, size: { type: "integer" } } } }, asks: { type: "array" }, ts: { type: "integer" } } } } },
    trade: { type: "object", properties: { type: { const: "trade" }, market_id: { type: "string" }, trade: { type: "object" } } },
    portfolio_snapshot: { type: "object", properties: { type: { const: "portfolio_snapshot" }, user: { type: "string" }, ts: { type: "integer" }, state: { type: "object" } } },
    portfolio_update: { type: "object", properties: { type: { const: "portfolio_update" }, user: { type: "string" }, ts: { type: "integer" }, state: { type: "object" } } },
    error: { type: "object", properties: { type: { const: "error" }, code: { enum: ["bad_json", "invalid_channel", "unknown_type"] }, channel: { type: ["string", "null"] }, detail: { type: "string" } } },
    portfolio_error: { type: "object", properties: { type: { const: "portfolio_error" }, channel: { type: "string" }, error: { enum: ["unauthorized", "address_mismatch", "bad_request"] } } }
  },
  close_codes: {
    "1008": "policy: too many connections from one address, or too many subscriptions on one connection",
    "1013": "try again later: the server's connection or subscription total is reached, or a slow consumer (more than 4 MiB queued, or among the longest queues when all together pass the total); reconnect with backoff and re-seed from REST"
  }
}
