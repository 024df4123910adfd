-- tasks/list (2025-11-25): one owner's tasks newest first, a page at a time. The keyset of the
-- page (created_at, id) is read from this index alone, so a page costs its size whatever the
-- owner's history; ids compare bytewise (COLLATE "C") so every node and store agree on the order.
CREATE INDEX tasks_owner_list_idx ON tasks (owner_key, created_at DESC, id COLLATE "C" DESC);
