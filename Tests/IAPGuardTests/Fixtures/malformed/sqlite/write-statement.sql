-- query: DELETE FROM orders
CREATE TABLE orders (id TEXT, user_id TEXT, product_id TEXT, price TEXT, created_at TEXT);
INSERT INTO orders VALUES ('o-1', 'u-1', 'com.example.coins.pack6', '4.99', '2026-01-01');
