//! A thread drawn as a tree: the loaded messages in tree order, the guide lines in front of
//! each, folded branches and the selection.
//!
//! By default only branching indents (`[ui] tree_indent = "branches"`): a message that is its
//! parent's only reply is drawn in the parent's column, so a long back-and-forth between two
//! assistants reads as a list instead of a staircase running off the screen; where a message
//! has several replies, they are drawn one level in with `├─`/`└─` guides. With
//! `tree_indent = "every"` each reply is drawn one level in under what it answers, so who
//! answers whom reads off the guides (down to [`MAX_INDENT`] levels).
//!
//! A reply whose parent the desk inferred (a v1.0 envelope names none: it was filed under
//! its session's latest message) hangs from a dotted guide, `├┄`/`└┄`, besides its `≈`: the
//! line drawn to its parent is a guess, which `M` can move.

pub use crate::config::TreeIndent;
use crate::store::ThreadOutline;

/// Deepest indentation drawn; deeper branches keep this column (and say their depth).
pub(crate) const MAX_INDENT: usize = 12;

/// The tree state of one open thread.
#[derive(Debug)]
pub struct ThreadTree {
    /// The thread, messages in tree order.
    pub outline: ThreadOutline,
    /// Each message's parent, as an index into `view.messages`.
    pub parent: Vec<Option<usize>>,
    /// How many replies each message has.
    pub replies: Vec<usize>,
    /// The guide drawn in front of each message (`│ ├─`).
    pub guide: Vec<String>,
    /// Folded messages (their replies are hidden).
    pub folded: Vec<bool>,
    /// Indices of the messages shown, in order.
    pub visible: Vec<usize>,
    /// Position in `visible` of the selection.
    pub selected: usize,
    /// First visible row shown.
    pub offset: usize,
    /// Cells of the intent column: the longest intent of the thread (BROADCAST, HANDOFF,
    /// an extension's own word), from 8 up to [`MAX_INTENT_WIDTH`].
    pub intent_width: usize,
    /// How replies indent (`[ui] tree_indent`), kept so the tree is built again alike.
    pub indent: TreeIndent,
}

/// The widest intent column; a longer intent is cut with `…`.
pub(crate) const MAX_INTENT_WIDTH: usize = 14;

impl ThreadTree {
    /// Builds the tree state of a loaded thread, indenting only at branches.
    pub fn new(outline: ThreadOutline) -> ThreadTree {
        ThreadTree::with_indent(outline, TreeIndent::Branches)
    }

    /// Builds the tree state of a loaded thread, its replies indented as `indent` says.
    pub fn with_indent(outline: ThreadOutline, indent: TreeIndent) -> ThreadTree {
        let n = outline.rows.len();
        let mut parent = vec![None; n];
        let mut replies = vec![0usize; n];
        // Tree order is depth first, so a message's parent is the nearest earlier message one
        // level up: a stack of the current path finds it in one pass.
        let mut path: Vec<usize> = Vec::new();
        for (i, m) in outline.rows.iter().enumerate() {
            path.truncate(m.depth);
            if m.depth > 0 {
                if let Some(&p) = path.last() {
                    parent[i] = Some(p);
                    replies[p] += 1;
                }
            }
            path.push(i);
        }
        // Guides: what each message's replies inherit (`cont`), and its own line.
        let mut cont: Vec<String> = vec![String::new(); n];
        let mut guide = vec![String::new(); n];
        let mut seen = vec![0usize; n];
        for i in 0..n {
            let Some(p) = parent[i] else { continue };
            seen[p] += 1;
            let alone = replies[p] == 1 && indent == TreeIndent::Branches;
            if alone || cont[p].chars().count() >= 2 * MAX_INDENT {
                guide[i] = cont[p].clone();
                cont[i] = cont[p].clone();
            } else {
                let last = seen[p] == replies[p];
                let joint = match (last, outline.rows[i].inferred) {
                    (true, false) => "└─",
                    (false, false) => "├─",
                    (true, true) => "└┄",
                    (false, true) => "├┄",
                };
                guide[i] = format!("{}{joint}", cont[p]);
                cont[i] = format!("{}{}", cont[p], if last { "  " } else { "│ " });
            }
        }
        let intent_width = outline
            .rows
            .iter()
            .filter_map(|m| m.intent.as_deref())
            .map(|i| crate::app::text::width(&crate::app::text::safe_line(i)))
            .max()
            .unwrap_or(0)
            .clamp(8, MAX_INTENT_WIDTH);
        let mut tree = ThreadTree {
            intent_width,
            indent,
            outline,
            parent,
            replies,
            guide,
            folded: vec![false; n],
            visible: Vec::new(),
            selected: 0,
            offset: 0,
        };
        tree.refresh_visible();
        tree
    }

    /// The selected message's index in `view.messages`.
    pub fn selected_index(&self) -> Option<usize> {
        self.visible.get(self.selected).copied()
    }

    /// The number of messages hidden under `i` (its whole subtree).
    pub(crate) fn subtree_len(&self, i: usize) -> usize {
        let d = self.outline.rows[i].depth;
        self.outline.rows[i + 1..]
            .iter()
            .take_while(|m| m.depth > d)
            .count()
    }

    pub(crate) fn refresh_visible(&mut self) {
        let keep = self.selected_index();
        self.visible.clear();
        let mut i = 0;
        let n = self.outline.rows.len();
        while i < n {
            self.visible.push(i);
            i += if self.folded[i] {
                1 + self.subtree_len(i)
            } else {
                1
            };
        }
        if let Some(k) = keep {
            self.select_index(k);
        }
    }

    /// Selects message `i`, unfolding its ancestors if it was hidden.
    pub fn select_index(&mut self, i: usize) {
        let mut p = self.parent.get(i).copied().flatten();
        let mut unfolded = false;
        while let Some(a) = p {
            if self.folded[a] {
                self.folded[a] = false;
                unfolded = true;
            }
            p = self.parent[a];
        }
        if unfolded {
            self.refresh_visible();
        }
        if let Ok(pos) = self.visible.binary_search(&i) {
            self.selected = pos;
        }
    }

    /// Selects the message with id `id`; whether it is in this thread.
    pub(crate) fn select_id(&mut self, id: &str) -> bool {
        match self.outline.rows.iter().position(|m| m.id == id) {
            Some(i) => {
                self.select_index(i);
                true
            }
            None => false,
        }
    }

    /// Moves the selection by `delta` visible rows.
    pub(crate) fn move_by(&mut self, delta: isize) {
        let last = self.visible.len().saturating_sub(1);
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    /// Folds or unfolds the selected branch.
    pub(crate) fn toggle(&mut self) {
        if let Some(i) = self.selected_index().filter(|&i| self.replies[i] > 0) {
            self.folded[i] = !self.folded[i];
            self.refresh_visible();
        }
    }

    /// Left: folds an open branch, else goes to the parent.
    pub(crate) fn collapse(&mut self) {
        let Some(i) = self.selected_index() else {
            return;
        };
        if self.replies[i] > 0 && !self.folded[i] {
            self.folded[i] = true;
            self.refresh_visible();
        } else {
            self.go_to_parent();
        }
    }

    /// Right: unfolds a folded branch, else goes to the first reply.
    pub(crate) fn expand(&mut self) {
        let Some(i) = self.selected_index() else {
            return;
        };
        if self.folded[i] {
            self.folded[i] = false;
            self.refresh_visible();
        } else if self.replies[i] > 0 {
            self.select_index(i + 1);
        }
    }

    /// Selects the selected message's parent.
    pub(crate) fn go_to_parent(&mut self) {
        if let Some(p) = self.selected_index().and_then(|i| self.parent[i]) {
            self.select_index(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TreeRow;

    fn msg(id: &str, depth: usize) -> TreeRow {
        TreeRow {
            id: id.into(),
            parent: None,
            intent: None,
            from: "A".into(),
            to: "B".into(),
            first_line: String::new(),
            status: "received".into(),
            received_at: String::new(),
            sent_at: String::new(),
            delivery: None,
            inferred: false,
            missing_parent: false,
            signature: None,
            pii: None,
            depth,
        }
    }

    /// A thread of `(id, depth)` rows, in tree order.
    fn outline(shape: &[(&str, usize)]) -> ThreadOutline {
        ThreadOutline {
            id: "t".into(),
            context: None,
            rows: shape.iter().map(|(id, d)| msg(id, *d)).collect(),
        }
    }

    fn tree(shape: &[(&str, usize)]) -> ThreadTree {
        ThreadTree::new(outline(shape))
    }

    #[test]
    fn guides_indent_only_at_branches() {
        // a → b → (c → d, e)
        let t = tree(&[("a", 0), ("b", 1), ("c", 2), ("d", 3), ("e", 2)]);
        assert_eq!(t.guide, ["", "", "├─", "│ ", "└─"]);
        assert_eq!(t.parent, [None, Some(0), Some(1), Some(2), Some(1)]);
        assert_eq!(t.replies, [1, 2, 1, 0, 0]);
    }

    #[test]
    fn fold_unfold_parent_and_reveal() {
        let mut t = tree(&[("a", 0), ("b", 1), ("c", 2), ("d", 3), ("e", 2)]);
        t.move_by(1);
        t.collapse();
        assert_eq!(t.visible, [0, 1]);
        assert_eq!(t.subtree_len(1), 3);
        t.collapse();
        assert_eq!(t.selected_index(), Some(0));
        assert!(t.select_id("d"));
        assert_eq!(t.visible, [0, 1, 2, 3, 4]);
        assert_eq!(t.selected_index(), Some(3));
        t.go_to_parent();
        assert_eq!(t.selected_index(), Some(2));
        t.expand();
        assert_eq!(t.selected_index(), Some(3));
        t.move_by(100);
        assert_eq!(t.selected_index(), Some(4));
    }

    #[test]
    fn every_reply_can_indent() {
        // a → b → (c → d, e)
        let shape = [("a", 0), ("b", 1), ("c", 2), ("d", 3), ("e", 2)];
        let t = ThreadTree::with_indent(outline(&shape), TreeIndent::Every);
        assert_eq!(t.guide, ["", "└─", "  ├─", "  │ └─", "  └─"]);
    }

    /// A reply the desk placed hangs from a dotted guide: its line to the parent is a guess.
    #[test]
    fn an_inferred_placement_has_a_dotted_guide() {
        let mut outline = outline(&[("a", 0), ("b", 1), ("c", 1)]);
        outline.rows[2].inferred = true;
        let t = ThreadTree::new(outline.clone());
        assert_eq!(t.guide, ["", "├─", "└┄"]);
        // Its parent's only reply: in the parent's column by default, dotted when indented.
        let mut one = outline;
        one.rows.remove(1);
        let t = ThreadTree::with_indent(one.clone(), TreeIndent::Every);
        assert_eq!(t.guide, ["", "└┄"]);
        assert_eq!(ThreadTree::new(one).guide, ["", ""]);
    }

    #[test]
    fn deep_chains_stay_in_one_column() {
        let shape: Vec<(String, usize)> = (0..1000).map(|i| (format!("m{i}"), i)).collect();
        let shape: Vec<(&str, usize)> = shape.iter().map(|(s, d)| (s.as_str(), *d)).collect();
        let t = tree(&shape);
        assert!(t.guide.iter().all(String::is_empty));
        // Indenting every reply, they stop moving right at the deepest indentation.
        let t = ThreadTree::with_indent(outline(&shape), TreeIndent::Every);
        let widest = t.guide.iter().map(|g| g.chars().count()).max().unwrap();
        assert_eq!(widest, 2 * MAX_INDENT);
    }
}
