
BlogitsJ(”f©ÀšoÊ@N†Àõ¿,IPÀ¹L6ÀQëÀœP§ÀËDgÀeƒ¾