//! KDE
