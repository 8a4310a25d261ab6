-- query: SELECT id AS order_id, user_id, product_id, price, created_at FROM orders ORDER BY id
CREATE TABLE orders (id TEXT, user_id TEXT, product_id TEXT, price TEXT, created_at TEXT);
INSERT INTO orders VALUES ('o-1', 'u-1', 'com.example.coins.pack6', '4.99', '2026-01-01');
INSERT INTO orders VALUES ('o-2', CAST(x'750031' AS TEXT), 'p', '1.00', '2026-01-01');
